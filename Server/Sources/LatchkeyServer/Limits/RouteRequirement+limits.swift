import Hummingbird

extension RouteRequirement where Context == LatchkeyRequestContext {
    /// At most `policy.limit` requests per `policy.window` per client (see ``RateLimitMiddleware``).
    static func limited(by policy: RateLimitPolicy, limiter: RateLimiter, trustedProxies: Set<String>, counting what: String) -> RouteRequirement {
        RouteRequirement([RateLimitMiddleware(limiter: limiter, policy: policy, trustedProxies: trustedProxies)]) { operation in
            operation.description +=
                "\n\nAbuse limit (`limits.\(policy.name)`): \(policy.limit) \(what) per \(Int(policy.window)) seconds per client IP"
                + " (IPv6: per /64) by default. Answers carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; past the"
                + " limit the answer is 429 `rate_limited` with `Retry-After`."
            for header in ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] { operation.addHeaderToEveryOutcome(header) }
            operation.add(.init(429, "Too many requests; see `Retry-After`.", headers: ["Retry-After"]))
        }
    }

    /// At most `policy.limit` requests per `policy.window` per device (`X-Device-ID`, checked before by another requirement).
    static func limitedPerDevice(by policy: RateLimitPolicy, limiter: RateLimiter, counting what: String) -> RouteRequirement {
        RouteRequirement([RateLimitMiddleware(limiter: limiter, policy: policy, trustedProxies: [], perDevice: true)]) { operation in
            operation.description +=
                "\n\nLimit (`limits.\(policy.name)`): \(policy.limit) \(what) per \(Int(policy.window)) seconds per device by default. Answers "
                + "carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; past the limit the answer is 429 `rate_limited` "
                + "with `Retry-After`."
            for header in ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] { operation.addHeaderToEveryOutcome(header) }
            operation.add(.init(429, "Too many requests from this device; see `Retry-After`.", headers: ["Retry-After"]))
        }
    }

    /// At most `policy.limit` failed requests per `policy.window` per client; over it, `worthTrying` decides (see
    /// ``FailureLimitMiddleware``).
    static func failuresLimited(
        by policy: RateLimitPolicy, limiter: RateLimiter, trustedProxies: Set<String>,
        worthTrying: @escaping @Sendable (Request, LatchkeyRequestContext) async throws -> Bool
    ) -> RouteRequirement {
        RouteRequirement([FailureLimitMiddleware(limiter: limiter, policy: policy, trustedProxies: trustedProxies, worthTrying: worthTrying)]) {
            operation in
            operation.add(
                .init(
                    429, "Too many failed attempts from this client; see `Retry-After`.",
                    headers: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]))
        }
    }
}
