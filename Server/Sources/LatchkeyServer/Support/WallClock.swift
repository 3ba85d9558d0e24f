import Foundation
import Synchronization

/// Where the server reads the current time. Injected so tests can move time without sleeping.
public protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
}

/// The system's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests and simulations.
public final class ManualClock: WallClock {
    private let current: Mutex<Date>

    /// Creates a clock standing at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = Mutex(start)
    }

    public func now() -> Date { self.current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        self.current.withLock { $0 += seconds }
    }
}
