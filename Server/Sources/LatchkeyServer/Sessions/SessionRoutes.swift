import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/refresh` and `POST /api/v1/auth/logout`.
struct SessionRoutes {
    let sessions: SessionService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.refresh,
            requirements: [
                .proof(self.dpop), .issuesSessionTokens,
                // Failures per client IP (the session ID is no secret); over that limit a token this server issued is still tried.
                .failuresLimited(by: self.limits.refreshFailures, limiter: self.limiter, trustedProxies: self.limits.trustedProxies) {
                    request, context in
                    guard let body = try? await request.decode(as: RefreshRequest.self, context: context) else { return false }
                    return try await self.sessions.issued(body.refreshToken)
                },
            ]
        ) { request, context in
            let body = try await request.decode(as: RefreshRequest.self, context: context)
            // Successes per session, counted in the rotation's own transaction: many phones share one carrier address.
            let (tokens, remaining) = try await self.sessions.refreshCounting(body.refreshToken, proof: context.proof)
            var answer = Answer.tokens(tokens)
            if let remaining {
                answer.headers.append(
                    contentsOf: RateLimiter.headers(policy: self.limits.refresh, remaining: remaining.count, resetAt: remaining.resetAt))
            }
            return answer
        }
        api.add(
            Self.logout,
            requirements: [
                .token(self.verifier, kinds: [.session], refusal: "Only a session's access token can log out; access codes are revoked with the CLI.")
            ]
        ) { request, context in
            let token = try context.requireIdentity()
            let body = try await request.decode(as: LogoutRequest.self, context: context)
            return Answer(LogoutResponse(revokedSessions: try await self.sessions.logout(token, scope: body.scope ?? .local)))
        }
    }
}

extension LogoutRequest: EmptyBodyDecodable {
    package static var emptyBody: LogoutRequest { LogoutRequest() }
}

extension SessionRoutes {
    static let refresh = APIOperation(
        .post, "/api/v1/auth/refresh", id: "refreshTokens", tag: "Auth", summary: "Trade a refresh token for the next token pair",
        description: """
            Rotates the refresh token: a new access token and a new refresh token of the same session (see Tokens in the document's \
            description). A session bound to a DPoP key needs a proof made with it; without one (a refresh token copied off the device) \
            the answer is 401 `invalid_grant`. An unknown, expired, revoked or reused refresh token is 401 `invalid_grant`.

            Abuse limits (`limits.`): 30 successful refreshes per 5 minutes per session (`refresh`, counted in the rotation itself; the \
            answers carry its `X-RateLimit-*` headers) and 60 failed refreshes per 5 minutes per client IP (`refresh-failures`). A \
            session ID is no secret, so a made-up refresh token never counts against its session; over the failure limit a refresh token \
            this server issued is still tried (a reused one still revokes its session), any other gets 429.
            """,
        requestBody: RefreshRequest.self,
        requestExample: #"{"refresh_token": "0f8fad5b-d9cb-469f-a165-70867728950e.q1Zk8t3S0Yd2pGQeYQ9b0m3fX5v7Wc1uJ2nR4hT6kLA"}"#,
        outcomes: [
            .init(
                200, "The next token pair; the presented refresh token is spent.", body: TokenPairResponse.self,
                headers: ["Cache-Control", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]),
            .badRequest(), .init(401, "The refresh token is not valid (`invalid_grant`).", headers: ["WWW-Authenticate"]), .tooLarge,
            .init(
                429, "Too many refreshes of this session, or failures from this client; see `Retry-After`.",
                headers: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]),
            .unavailable,
        ])

    static let logout = APIOperation(
        .post, "/api/v1/auth/logout", id: "logout", tag: "Auth", summary: "End sessions",
        description:
            "Ends sessions of the calling user: `local` (the default, also for an empty body) the presented token's, `global` every one, "
            + "`others` every one but the presented token's. Their refresh tokens stop working and their access tokens are refused at once "
            + "here (and by other processes as soon as they read the revocation feed). `global` also dooms the secret of each of the user's "
            + "keyless devices: the device's next `register-device` with it answers a new `device_secret`, and the old one stops working. "
            + "Needs a session's access token.",
        requestBody: LogoutRequest.self, requestBodyOptional: true, requestExample: #"{"scope": "local"}"#,
        outcomes: [.init(200, "The sessions were ended.", body: LogoutResponse.self), .badRequest(), .tooLarge, .unavailable])
}
