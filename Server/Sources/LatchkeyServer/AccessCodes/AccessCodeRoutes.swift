import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/access-code/exchange`: a valid access code for a new session of its user.
struct AccessCodeRoutes {
    let accessCodes: AccessCodeService
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.exchange,
            requirements: [
                .proof(self.dpop), .issuesSessionTokens,
                .limited(
                    by: self.limits.accessCodeExchange, limiter: self.limiter, trustedProxies: self.limits.trustedProxies, counting: "exchanges"),
            ]
        ) { request, context in
            let body = try await request.decode(as: AccessCodeExchangeRequest.self, context: context)
            return Answer.tokens(try await self.accessCodes.exchange(code: body.accessCode, proof: context.proof))
        }
    }

    static let exchange = APIOperation(
        .post, "/api/v1/auth/access-code/exchange", id: "exchangeAccessCode", tag: "Auth", summary: "Trade an access code for a session",
        description:
            "Access codes are JWTs support staff issue with `latchkey access-code issue --user-id <uuid>` for an existing user (`sub` = "
            + "that user, `kind` = `access_code`). They work as a Bearer themselves; this trades one for a normal session of its user (a "
            + "token pair). Revoking the code ends the sessions exchanged from it. Such a session never counts as a recent sign-in (403 "
            + "`reauthentication_required` where one is needed), so it can add no way to sign in and leaves nothing behind once revoked. "
            + "A value that is not a valid, unrevoked access code is 401 "
            + "`invalid_token`.",
        requestBody: AccessCodeExchangeRequest.self,
        outcomes: [
            .init(200, "A new session for the code's user.", body: TokenPairResponse.self, headers: ["Cache-Control"]), .badRequest(),
            .init(401, "Not a valid access code (`invalid_token`).", headers: ["WWW-Authenticate"]), .tooLarge, .unavailable,
        ])
}
