import Hummingbird
import HummingbirdAuth
import Foundation

/// Authenticates `Authorization: Bearer <token>` with ``AccessTokenVerifier``.
///
/// No bearer: the request passes on unauthenticated (routes then call `requireIdentity()`).
/// A bearer that fails verification: 401 `invalid_token` at once.
struct BearerAuthenticator: AuthenticatorMiddleware {
    typealias Context = LatchkeyRequestContext
    let verifier: AccessTokenVerifier

    func authenticate(request: Request, context: Context) async throws -> VerifiedToken? {
        guard let token = request.bearerToken else { return nil }
        return try await self.verifier.verify(token)
    }
}

extension Request {
    /// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 7235).
    var bearerToken: String? {
        guard let value = self.headers[.authorization], value.count > 7,
            value.prefix(7).lowercased() == "bearer "
        else { return nil }
        let token = value.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
