import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/refresh` and `POST /api/v1/auth/logout`.
@available(LatchkeyServer 1.0, *)
struct SessionRoutes {
    let sessions: SessionService
    let dpop: DPoPVerifier
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(public router: RouterGroup<LatchkeyRequestContext>, authenticated: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/refresh") { request, context in
            // Checked before the limits count: a proof answered "use this nonce" is not a failed refresh.
            let proof = try self.dpop.proof(of: request)
            var request = request
            let body = try await request.decodeJSON(as: RefreshRequest.self, limit: self.maxBodySize)
            let refresh = { try tokenResponse(try await self.sessions.refresh(body.refreshToken, proof: proof)) }
            let client = context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)
            // Failures per client IP (the session ID is no secret); over that limit a real token is still tried.
            return try await self.limiter.limitingFailures(
                self.limits.refreshFailures, key: client, worthTrying: { try await self.sessions.issued(body.refreshToken) }
            ) {
                guard let sessionID = RefreshToken.sessionID(of: body.refreshToken) else { return try await refresh() }
                // Successes per session, not per IP: many phones share one carrier address.
                return try await self.limiter.limiting(self.limits.refresh, key: sessionID, refresh)
            }
        }
        authenticated.post("auth/logout") { request, context in
            let token = try context.requireIdentity()
            var request = request
            let body = try await request.decodeJSON(as: LogoutRequest.self, limit: self.maxBodySize, emptyValue: LogoutRequest())
            let revoked = try await self.sessions.logout(token, scope: body.scope ?? .local)
            return try jsonResponse(LogoutResponse(revokedSessions: revoked))
        }
    }
}
