import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/refresh` and `POST /api/v1/auth/logout`.
@available(LatchkeyServer 1.0, *)
struct SessionRoutes {
    let sessions: SessionService
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(public router: RouterGroup<LatchkeyRequestContext>, authenticated: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/refresh") { request, context in
            var request = request
            let body = try await request.decodeJSON(as: RefreshRequest.self, limit: self.maxBodySize)
            // Per session, not per IP: many phones share one carrier address.
            let key =
                RefreshToken.sessionID(of: body.refreshToken)
                ?? "ip " + context.clientIP(of: request, trustedProxies: self.limits.trustedProxies)
            return try await self.limiter.limiting(self.limits.refresh, key: key) {
                try jsonResponse(try await self.sessions.refresh(body.refreshToken))
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
