import Synchronization

/// A lock for async code: one holder at a time.
///
/// SQLite allows one writer; serialising transactions here keeps statements of concurrent requests
/// from interleaving on the shared connection. Unlocking wakes the longest waiter to try again rather
/// than handing it the lock: a task that is already running may take a free lock at once, so the
/// database never sits idle while a woken waiter waits for a thread. A waiter that loses the race
/// goes back to the front of the queue.
@available(LatchkeyServer 1.0, *)
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        /// Resumed with `true` when the lock was taken for the waiter, `false` when woken to try again.
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }
    private let state = Mutex(State())

    func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await self.lock()
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

    private func lock() async {
        if self.tryLock() { return }
        var front = false
        while true {
            let acquired = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let acquiredNow = self.state.withLock { state -> Bool in
                    if !state.locked {
                        state.locked = true
                        return true
                    }
                    if front { state.waiters.insert(continuation, at: 0) } else { state.waiters.append(continuation) }
                    return false
                }
                if acquiredNow { continuation.resume(returning: true) }
            }
            if acquired || self.tryLock() { return }
            front = true
        }
    }

    private func unlock() {
        let next = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.locked = false
            return state.waiters.isEmpty ? nil : state.waiters.removeFirst()
        }
        next?.resume(returning: false)
    }
}
