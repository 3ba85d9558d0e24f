import Foundation

/// How long ``LatchkeySession/liveEvents()`` waits before connecting again: exponential backoff with jitter.
///
/// The wait before the `n`th reconnect in a row is drawn from `[d/2, d]`, where
/// `d = min(maximumDelay, initialDelay × multiplier^(n-1))` ("equal jitter"): never a burst of immediate retries, and
/// clients that lost the same server at the same moment spread out. A connection that reached `connected` starts the
/// count again.
public struct ReconnectPolicy: Sendable {
    /// The longest wait before the first reconnect (default 1 second).
    public var initialDelay: TimeInterval
    /// The longest wait at all (default 60 seconds).
    public var maximumDelay: TimeInterval
    /// How much the longest wait grows with each failure in a row (default 2).
    public var multiplier: Double
    /// Draws the jitter: a number in `0...1` (default: the system's random numbers). Tests pass a fixed one.
    public var random: @Sendable () -> Double

    /// Creates a policy; the defaults wait 0.5–1 s, then 1–2 s, 2–4 s, … up to 30–60 s.
    public init(
        initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 60, multiplier: Double = 2,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.random = random
    }

    /// The wait before reconnect number `attempt` in a row (1 for the first).
    public func delay(forAttempt attempt: Int) -> TimeInterval {
        let exponent = Double(max(0, attempt - 1))
        let ceiling = min(self.maximumDelay, self.initialDelay * pow(self.multiplier, min(exponent, 64)))
        let jitter = min(1, max(0, self.random()))
        return ceiling / 2 + ceiling / 2 * jitter
    }
}
