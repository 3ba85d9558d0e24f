import Configuration
import Foundation

/// Second factors (`mfa.*`, and their limits under `limits.`).
///
/// - `mfa.issuer`: the issuer an authenticator app shows beside the account (default `email.app-name`, else `Latchkey`).
/// - `mfa.step-up-lifetime`: seconds a second factor proved by a session (at sign-in or by a step-up) lets it do the
///   sensitive actions — deleting the account, changing the password, unlinking an identity or the email address, adding
///   or removing a factor, regenerating recovery codes — for a user who has a factor (default 600).
/// - `limits.mfa-failures.limit`/`.window`: wrong codes per user — sign-in verifies, confirmations and step-ups all
///   count — before every verify of that user, the right code included, answers 429 with `Retry-After` (10 per 900 s).
/// - `limits.mfa-verify.limit`/`.window`: `POST /api/v1/mfa/verify` per client IP (default 0: off; the per-token and
///   per-user limits bound guessing).
public struct SecondFactorPolicy: Sendable, Equatable {
    public var issuer: String?
    public var stepUpLifetime: TimeInterval = 600
    public var failures = RateLimitPolicy(name: "mfa-failures", limit: 10, window: 900)
    public var verify = RateLimitPolicy(name: "mfa-verify", limit: 0, window: 60)
    /// Wrong codes one `mfa_token` survives: the fifth spends it.
    public static let challengeFailures = 5

    public init() {}

    init(reader: ConfigReader, limits: ConfigReader) {
        let defaults = Self()
        self.issuer = reader.string(forKey: "issuer")
        self.stepUpLifetime = reader.double(forKey: "step-up-lifetime", default: defaults.stepUpLifetime)
        self.failures = defaults.failures.reading(limits)
        self.verify = defaults.verify.reading(limits)
    }
}
