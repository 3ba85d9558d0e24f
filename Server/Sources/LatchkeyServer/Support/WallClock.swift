import Foundation
import Synchronization

/// Where the server reads the current time and waits for time to pass. Injected so tests can move time without
/// sleeping: the background loops (expiry sweep, pruning, the outbox's poll) wait on it.
public protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
    /// Returns once `seconds` have passed on this clock; throws `CancellationError` when the task is cancelled first.
    func sleep(for seconds: TimeInterval) async throws
}

extension WallClock {
    /// Real time: `Task.sleep`.
    public func sleep(for seconds: TimeInterval) async throws {
        try await Task.sleep(for: .seconds(seconds))
    }
}

/// The system's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests and simulations. A ``sleep(for:)`` on it returns when
/// ``advance(by:)`` moves the clock past its end, never by itself.
public final class ManualClock: WallClock {
    private struct Sleeper {
        let id: UInt64
        let until: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Sleeps cancelled before they were registered (each removed when its sleep ends).
        var cancelled: Set<UInt64> = []
    }

    private let state: Mutex<State>

    /// Creates a clock standing at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.state = Mutex(State(now: start))
    }

    public func now() -> Date { self.state.withLock { $0.now } }

    /// Moves the clock forward by `seconds`, ending the sleeps it moves past.
    public func advance(by seconds: TimeInterval) {
        let due = self.state.withLock { state in
            state.now += seconds
            let now = state.now
            let due = state.sleepers.filter { $0.until <= now }
            state.sleepers.removeAll { $0.until <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    public func sleep(for seconds: TimeInterval) async throws {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        // A cancellation that came after an advance had ended the sleep leaves its mark behind: take it away.
        defer { _ = self.state.withLock { $0.cancelled.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = self.state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    let until = state.now.addingTimeInterval(max(0, seconds))
                    if until <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, until: until, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = self.state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
