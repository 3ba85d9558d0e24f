import Foundation

/// Where the SDK reads the current time: token expiry checks and rate-limit resets use it.
///
/// Injected so tests and simulations move time without sleeping.
public protocol LatchkeyClock: Sendable {
    /// The current instant.
    func now() -> Date
    /// Waits `seconds` (the SDK waits only before sending again a request the server asked to be repeated shortly: a 429
    /// with a `Retry-After` of at most 5 seconds; and before ``LatchkeySession/liveEvents()`` connects again).
    func sleep(for seconds: TimeInterval) async throws
}

extension LatchkeyClock {
    /// Sleeps the task for `seconds`.
    public func sleep(for seconds: TimeInterval) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}

/// The system's clock.
public struct SystemLatchkeyClock: LatchkeyClock {
    /// Creates the system clock.
    public init() {}
    /// The current instant, from `Date()`.
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests and simulations.
public final class ManualLatchkeyClock: LatchkeyClock {
    private let current: Locked<Date>

    /// Creates a clock standing at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = Locked(start)
    }

    /// The instant the clock stands at.
    public func now() -> Date { self.current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        self.current.withLock { $0 += seconds }
    }

    /// Moves the clock forward by `seconds` at once, without waiting.
    public func sleep(for seconds: TimeInterval) async throws {
        self.advance(by: max(0, seconds))
    }
}
