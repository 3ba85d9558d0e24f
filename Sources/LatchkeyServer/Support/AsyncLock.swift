import Synchronization

/// A FIFO lock for async code: one holder at a time, waiters resume in arrival order.
///
/// SQLite allows one writer; serialising transactions here keeps statements of concurrent
/// requests from interleaving on the shared connection.
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }
    private let state = Mutex(State())

    func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await self.lock()
        defer { self.unlock() }
        return try await body()
    }

    private func lock() async {
        let acquired = self.state.withLock { state -> Bool in
            if state.locked { return false }
            state.locked = true
            return true
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let acquiredNow = self.state.withLock { state -> Bool in
                if !state.locked {
                    state.locked = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if acquiredNow { continuation.resume() }
        }
    }

    private func unlock() {
        let next = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
                state.locked = false
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            if state.head > 1024 && state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return next  // ownership passes straight to the next waiter
        }
        next?.resume()
    }
}
