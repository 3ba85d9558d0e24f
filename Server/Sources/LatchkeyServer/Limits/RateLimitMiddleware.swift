import Hummingbird

/// Counts a route's requests against `policy` per client (address, or IPv6 /64; `X-Forwarded-For` from trusted
/// proxies) before it runs: `X-RateLimit-Limit/Remaining/Reset` on every answer, 429 `rate_limited` with `Retry-After`
/// past the limit. Declared on the route's own group, where the route is.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let limiter: RateLimiter
    let policy: RateLimitPolicy
    let trustedProxies: Set<String>
    /// Counts per device (the canonical `X-Device-ID`, which an earlier middleware checked) instead of per client.
    var perDevice = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let key =
            self.perDevice
            ? "device:" + (try request.requireDeviceID()) : context.limitKey(of: request, trustedProxies: self.trustedProxies)
        return try await self.limiter.limiting(self.policy, key: key) { try await next(request, context) }
    }
}

/// Counts only the failures of a route per client, for routes whose clients share addresses with strangers (a
/// carrier NAT): a failure stays counted, a success is given back. Over the limit, `worthTrying` (given the request with its body collected)
/// decides whether the request still runs and gets its own answer — a refresh token this server issued does, so the
/// address's real users are not locked out by someone else's failures — or gets 429.
struct FailureLimitMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let limiter: RateLimiter
    let policy: RateLimitPolicy
    let trustedProxies: Set<String>
    let worthTrying: @Sendable (Request, Context) async throws -> Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let key = context.limitKey(of: request, trustedProxies: self.trustedProxies)
        return try await self.limiter.limitingFailures(
            self.policy, key: key,
            worthTrying: {
                _ = try await request.collectBody(upTo: context.maxUploadSize)
                return try await self.worthTrying(request, context)
            }
        ) { try await next(request, context) }
    }
}
