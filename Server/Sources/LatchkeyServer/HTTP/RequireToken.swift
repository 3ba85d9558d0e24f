import Hummingbird
import LatchkeyAPI

/// Lets only the token kinds a route takes reach it: 401 without a bearer (unless `optional`), 403 with another kind.
/// Put it after ``BearerAuthenticator`` on the route's group.
struct RequireToken: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let kinds: Set<TokenKind>
    /// Whether a request without a bearer passes (an optional bearer, such as the one that asks Sign in with Apple to link).
    var optional = false
    /// Why other kinds are refused, for the 403's message.
    let refusal: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = context.identity else {
            if self.optional { return try await next(request, context) }
            throw APIError.missingToken
        }
        guard self.kinds.contains(token.kind) else { throw APIError(.forbidden, .forbidden, self.refusal) }
        return try await next(request, context)
    }
}
