import Dispatch
import Foundation
import LatchkeyPasswords
import Synchronization

/// Runs password hashes on ``HashingThreads`` (dedicated, at a lower CPU priority), off the event loops and the task pool,
/// at most `threads` at a time, with at most `queueLimit`
/// more waiting: beyond that a request is refused at once (``ServiceError/busy``, 503 with `Retry-After`) instead of
/// queueing without end. So a flood of logins costs at most `threads` cores; token verification, which never hashes
/// a password, keeps the others.
final class PasswordHashingPool: Sendable {
    let hasher: PasswordHasher
    let threads: Int
    let queueLimit: Int
    private let state = Mutex<State>(State())
    /// A hash of a random password, verified against when an address has no account, so that an unknown address costs
    /// the same time as a wrong password.
    private let dummy = Mutex<String?>(nil)
    private let verified = Atomic<Int>(0)

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    init(hasher: PasswordHasher, threads: Int, queueLimit: Int) {
        self.hasher = hasher
        self.threads = threads
        self.queueLimit = queueLimit
        HashingThreads.shared.ensure(threads)
    }

    /// The PHC string of `password` (normalised already).
    func hash(_ password: String) async throws(ServiceError) -> String {
        try await self.run { [hasher] in hasher.hash(password) }
    }

    /// Verifies `password` against `phc`, or against the dummy hash when `phc` is nil (the answer is then `.invalid`).
    func verify(_ password: String, against phc: String?) async throws(ServiceError) -> PasswordHasher.Verification {
        let stored: String
        if let phc { stored = phc } else { stored = try await self.dummyHash() }
        let verification = try await self.run { [hasher] in hasher.verify(password, against: stored) }
        self.verified.add(1, ordering: .relaxed)
        return phc == nil ? .invalid : verification
    }

    /// How many passwords were verified, against a stored hash or the dummy: for tests that check an unknown address
    /// costs a verification as a wrong password does.
    var verifications: Int { self.verified.load(ordering: .relaxed) }

    private func dummyHash() async throws(ServiceError) -> String {
        if let dummy = self.dummy.withLock({ $0 }) { return dummy }
        let made = try await self.hash(Secret.generate())
        return self.dummy.withLock { dummy in
            if let dummy { return dummy }
            dummy = made
            return made
        }
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws(ServiceError) -> T {
        let admitted: Bool? = self.state.withLock { state in
            if state.running < self.threads {
                state.running += 1
                return true
            }
            return state.waiting.count < self.queueLimit ? false : nil
        }
        guard let admitted else { throw .busy }
        if !admitted {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = self.state.withLock { state in
                    if state.running < self.threads {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            HashingThreads.shared.submit { continuation.resume(returning: body()) }
        }
        // The slot passes straight to the next waiter, if any.
        let next = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
        return result
    }
}
