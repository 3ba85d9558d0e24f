import Hummingbird

extension RateLimiter {
    /// Runs `body`, an action metered by `policy` for `key` (see ``limiting(_:key:_:)``). A guest's action also counts
    /// against `network` (`limits.guest-per-network` and the guest's client network, an IPv4 address or an IPv6 /64) when
    /// the meter limits guests: a guest cannot start its meter afresh with every new device ID it makes up.
    ///
    /// The network counts admitted actions only: one the meter refuses or that fails (an error) is taken back, and so,
    /// when the meter counts only successes, is one answered other than 2xx. Past it the answer is 429 `rate_limited`
    /// with its headers and `Retry-After`, and the meter is not touched; otherwise the answer carries the meter's headers.
    func metering(
        _ policy: RateLimitPolicy, key: String, guestNetwork network: (policy: RateLimitPolicy, key: String)?,
        _ body: () async throws -> Response
    ) async throws -> Response {
        guard let network, policy.isEnabled, let decision = try await self.hit(network.policy, key: network.key) else {
            return try await self.limiting(policy, key: key, body)
        }
        switch decision {
        case .denied(let resetAt):
            throw self.refusal(network.policy, resetAt: resetAt)
        case .allowed(let hitID, _, _):
            let response: Response
            do { response = try await self.limiting(policy, key: key, body) } catch {
                try? await self.undo(network.policy, key: network.key, hitID: hitID)
                throw error
            }
            if policy.countsOnlySuccesses && !(200..<300).contains(response.status.code) {
                try await self.undo(network.policy, key: network.key, hitID: hitID)
            }
            return response
        }
    }
}
