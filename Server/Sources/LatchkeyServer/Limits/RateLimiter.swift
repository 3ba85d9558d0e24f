import Crypto
import Foundation

/// Counts requests against rate-limit policies; knows nothing of HTTP.
package struct RateLimiter: Sendable {
    let store: any RateLimitStore
    let clock: any WallClock

    /// Counts one request of `key` against `policy`; nil when the policy is off.
    func hit(_ policy: RateLimitPolicy, key: String) async throws -> RateLimitDecision? {
        guard policy.isEnabled else { return nil }
        return try await self.store.recordHit(bucket: Self.bucket(policy, key), limit: policy.limit, window: policy.window, now: self.clock.now())
    }

    /// Takes a counted request back.
    func undo(_ policy: RateLimitPolicy, key: String, hitID: String) async throws {
        try await self.store.removeHit(bucket: Self.bucket(policy, key), hitID: hitID)
    }

    /// Forgets every request of `key` counted against `policy`.
    func reset(_ policy: RateLimitPolicy, key: String) async throws {
        try await self.store.removeHits(bucket: Self.bucket(policy, key))
    }

    var now: Date { self.clock.now() }

    /// Buckets hold hashed keys: client IPs and device IDs are not stored in the clear.
    static func bucket(_ policy: RateLimitPolicy, _ key: String) -> String {
        policy.name + ":" + SHA256.hash(data: Data(key.utf8)).hexString
    }
}
