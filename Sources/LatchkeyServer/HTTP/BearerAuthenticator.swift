import Hummingbird
import HummingbirdAuth

/// Authenticates `Authorization: Bearer <token>` with ``AccessTokenVerifier``.
///
/// No bearer: the request passes on unauthenticated (routes then call `requireIdentity()`).
/// A bearer that fails verification: 401 `invalid_token` at once.
struct BearerAuthenticator: AuthenticatorMiddleware {
    typealias Context = LatchkeyRequestContext
    let verifier: AccessTokenVerifier

    func authenticate(request: Request, context: Context) async throws -> VerifiedToken? {
        guard let bearer = request.headers.bearer else { return nil }
        return try await self.verifier.verify(bearer.token)
    }
}
