import Foundation
import Hummingbird
import LatchkeyAPI

/// Meters the routes behind it with a configured ``Meter``, for Swift backends that embed `LatchkeyServer`.
///
/// Put it after ``BearerAuthenticator``. It needs a token (401 otherwise); guests must also send `X-Device-ID`
/// (400 otherwise) naming their token's device (403 otherwise) and are counted per SHA-256(client IP + device
/// ID), and, when the meter limits guests, per client network too (`limits.guest-per-network` a day, across device
/// IDs); users per user ID. Only 2xx answers
/// count: a request that fails is taken back. Every metered answer carries `X-RateLimit-Limit`,
/// `X-RateLimit-Remaining` and `X-RateLimit-Reset`; over the limit the answer is 429 `rate_limited` with
/// `Retry-After`, and the route is not called.
///
/// ```swift
/// let router = buildRouter(services: services)
/// router.group("api/edits")
///     .add(middleware: BearerAuthenticator(verifier: services.verifier))
///     .add(middleware: MeterMiddleware(meter: "actions", services: services))
///     .post { request, context in … }
/// ```
public struct MeterMiddleware: RouterMiddleware {
    public typealias Context = LatchkeyRequestContext
    let meter: Meter
    let limiter: RateLimiter
    let trustedProxies: Set<String>
    let guestPerNetwork: RateLimitPolicy
    /// `app-attest.unattested-guest-limit` where the policy applies it: guests without `att` are held to it.
    let unattestedGuestLimit: Int?

    package init(
        meter: Meter, limiter: RateLimiter, trustedProxies: Set<String>, guestPerNetwork: RateLimitPolicy, unattestedGuestLimit: Int? = nil
    ) {
        self.meter = meter
        self.limiter = limiter
        self.trustedProxies = trustedProxies
        self.guestPerNetwork = guestPerNetwork
        self.unattestedGuestLimit = unattestedGuestLimit
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let token = try context.requireIdentity()
        let guest = token.kind == .guest
        let key = guest ? try meterKey(guest: token, request: request, context: context, trustedProxies: self.trustedProxies) : token.userID
        let network = guest ? (self.guestPerNetwork, context.limitKey(of: request, trustedProxies: self.trustedProxies)) : nil
        let policy = self.meter.policy(guest: guest, attested: token.claims.attested == true, unattestedGuestLimit: self.unattestedGuestLimit)
        return try await self.limiter.metering(policy, key: key, guestNetwork: network) { try await next(request, context) }
    }
}
