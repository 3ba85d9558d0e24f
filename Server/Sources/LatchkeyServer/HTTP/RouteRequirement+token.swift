import Hummingbird
import LatchkeyAPI

extension RouteRequirement where Context == LatchkeyRequestContext {
    /// `Authorization: Bearer` verified by `verifier`: 401 without a valid one (unless `optional`); with `kinds`, 403
    /// for another kind of token, saying `refusal`; with identity providers configured, 502 when a provider's token came
    /// and its keys could not be fetched.
    static func token(
        _ verifier: AccessTokenVerifier, kinds: Set<TokenKind>? = nil, optional: Bool = false, refusal: String = ""
    ) -> RouteRequirement {
        var middleware: [any MiddlewareProtocol<Request, Response, LatchkeyRequestContext>] = [BearerAuthenticator(verifier: verifier)]
        if kinds != nil || !optional {
            middleware.append(RequireToken(kinds: kinds ?? Set(TokenKind.allCases), optional: optional, refusal: refusal))
        }
        return RouteRequirement(middleware) { operation in
            operation.security = optional ? .optionalBearer : .bearer
            operation.add(.unauthorized(optional ? "The bearer sent is not a valid access token." : "No valid access token."))
            if kinds != nil { operation.add(.forbidden(refusal)) }
            if verifier.external != nil { operation.add(.providerKeysUnreachable) }
        }
    }
}
