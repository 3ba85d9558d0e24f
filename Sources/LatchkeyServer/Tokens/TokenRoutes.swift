import Hummingbird
import LatchkeyAPI

/// `GET /api/v1/validate-token`: `{valid: true, sub, exp, kind}`, or 401 `{valid: false, error}`.
@available(LatchkeyServer 1.0, *)
struct TokenRoutes {
    let verifier: AccessTokenVerifier

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.get("validate-token") { request, _ in
            do {
                guard let bearer = request.bearerToken else { throw APIError.missingToken }
                let token = try await self.verifier.verify(bearer)
                return try jsonResponse(ValidateTokenResponse(sub: token.userID, exp: token.claims.expiresAt, kind: token.kind))
            } catch {
                guard var apiError = APIError.translating(error), apiError.status == .unauthorized else { throw error }
                apiError.body = InvalidTokenResponse(error: .init(code: apiError.code, message: apiError.message))
                throw apiError
            }
        }
    }
}
