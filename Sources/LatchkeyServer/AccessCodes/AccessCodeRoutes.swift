import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/access-code/exchange`: a valid access code for a new session of its user.
@available(LatchkeyServer 1.0, *)
struct AccessCodeRoutes {
    let accessCodes: AccessCodeService
    let dpop: DPoPVerifier
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/access-code/exchange") { request, context in
            let client = context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)
            let proof = try self.dpop.proof(of: request)
            return try await self.limiter.limiting(self.limits.accessCodeExchange, key: client) {
                var request = request
                let body = try await request.decodeJSON(as: AccessCodeExchangeRequest.self, limit: self.maxBodySize)
                return try tokenResponse(try await self.accessCodes.exchange(code: body.accessCode, proof: proof))
            }
        }
    }
}
