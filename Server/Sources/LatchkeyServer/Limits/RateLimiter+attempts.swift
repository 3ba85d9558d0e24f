import Foundation

extension RateLimiter {
    /// Runs `check` (a password check, a refresh, a mail) as one attempt of `key` against `policy`, a limit of failures.
    ///
    /// The attempt is counted before `check` runs, in one atomic step ("take one unless over the limit", serialised per
    /// bucket on both databases and across processes), so of any number of concurrent attempts at most `policy.limit` are
    /// checked; a check after the fact would let every attempt in flight through. The attempt is given back when it was
    /// no failure (`failed` says false) or `check` threw. Over the limit `check` does not run and `refusal`, given the
    /// time the oldest failure leaves the window, is thrown.
    func attempting<Value>(
        _ policy: RateLimitPolicy, key: String, refusal: (Date) -> any Error, failed: (Value) -> Bool, _ check: () async throws -> Value
    ) async throws -> Value {
        guard let decision = try await self.hit(policy, key: key) else { return try await check() }
        switch decision {
        case .denied(let resetAt):
            throw refusal(resetAt)
        case .allowed(let hitID, _, _):
            let value: Value
            do { value = try await check() } catch {
                try? await self.undo(policy, key: key, hitID: hitID)
                throw error
            }
            if !failed(value) { try await self.undo(policy, key: key, hitID: hitID) }
            return value
        }
    }
}
