import Foundation
import Synchronization

/// A lock for async code: one holder at a time.
///
/// SQLite allows one writer; serialising transactions here keeps statements of concurrent requests
/// from interleaving on the shared connection. Unlocking wakes the longest waiter to try again rather
/// than handing it the lock: a task that is already running may take a free lock at once, so the
/// database never sits idle while a woken waiter waits for a thread. A waiter that loses the race
/// goes back to the front of the queue. A waiter gives up after `timeout` (``StoreError/unavailable(_:)``, so
/// a request answers 503 instead of queueing for ever behind a stuck writer).
final class AsyncLock: Sendable {
    private enum Wake {
        case acquired
        case retry
        case timedOut
    }

    private struct State {
        var locked = false
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Wake, Never>)] = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())
    private let timeout: Duration?

    init(timeout: Duration? = nil) { self.timeout = timeout }

    /// Runs `body` holding the lock; `patient` waits however long it takes (closing the database).
    func withLock<T: Sendable>(patient: Bool = false, _ body: () async throws -> T) async throws -> T {
        try await self.lock(deadline: patient ? nil : self.timeout.map { ContinuousClock.now + $0 })
        defer { self.unlock() }
        return try await body()
    }

    private func tryLock() -> Bool {
        self.state.withLock { state in
            if state.locked { return false }
            state.locked = true
            return true
        }
    }

    private func lock(deadline: ContinuousClock.Instant?) async throws {
        if self.tryLock() { return }
        var front = false
        while true {
            let id = self.state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
            let timer = deadline.map { deadline in
                Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    self.expire(id)
                }
            }
            let wake = await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
                let acquiredNow = self.state.withLock { state -> Bool in
                    if !state.locked {
                        state.locked = true
                        return true
                    }
                    if front { state.waiters.insert((id, continuation), at: 0) } else { state.waiters.append((id, continuation)) }
                    return false
                }
                if acquiredNow { continuation.resume(returning: .acquired) }
            }
            timer?.cancel()
            switch wake {
            case .acquired: return
            case .timedOut: throw StoreError.unavailable("the database was busy for longer than its timeout")
            case .retry:
                if self.tryLock() { return }
                if let deadline, ContinuousClock.now >= deadline {
                    throw StoreError.unavailable("the database was busy for longer than its timeout")
                }
                front = true
            }
        }
    }

    /// Wakes the waiter `id`, if it still waits, to give up.
    private func expire(_ id: UInt64) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Wake, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        waiter?.resume(returning: .timedOut)
    }

    private func unlock() {
        let next = self.state.withLock { state -> CheckedContinuation<Wake, Never>? in
            state.locked = false
            return state.waiters.isEmpty ? nil : state.waiters.removeFirst().continuation
        }
        next?.resume(returning: .retry)
    }
}
