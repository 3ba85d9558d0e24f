import Foundation
import Synchronization

/// Vended credentials per user, kept until 10 minutes before they expire, with one STS call in flight per user however
/// many requests ask at once (a thousand app launches are one `AssumeRole`). A failed call is not kept: the next request
/// tries again. ``drop(userID:)`` (global logout, account deletion) forgets a user's entry, also one still being fetched.
package final class StorageCredentialsCache: Sendable {
    /// Credentials are handed out only while they have at least this long left.
    static let margin: TimeInterval = 600

    private enum Entry {
        case ready(AssumeRoleResponse)
        case pending(Task<AssumeRoleResponse, any Error>, generation: UInt64)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let clock: any WallClock

    init(capacity: Int = 100_000, clock: any WallClock) {
        self.capacity = capacity
        self.clock = clock
    }

    /// The user's credentials: the cached ones while they have more than ``margin`` left, else the result of `fetch`,
    /// shared with every request for the same user that arrives meanwhile.
    func credentials(
        forUser userID: String, fetch: @escaping @Sendable () async throws -> AssumeRoleResponse
    ) async throws -> AssumeRoleResponse {
        let now = self.clock.now()
        enum Lookup {
            case cached(AssumeRoleResponse)
            case fetching(Task<AssumeRoleResponse, any Error>, generation: UInt64)
        }
        let lookup: Lookup = self.state.withLock { state in
            switch state.entries[userID] {
            case .ready(let credentials) where credentials.expiration.timeIntervalSince(now) > Self.margin:
                return .cached(credentials)
            case .pending(let task, let generation):
                return .fetching(task, generation: generation)
            default:
                state.generation &+= 1
                let task = Task { try await fetch() }
                state.entries[userID] = .pending(task, generation: state.generation)
                return .fetching(task, generation: state.generation)
            }
        }
        switch lookup {
        case .cached(let credentials):
            return credentials
        case .fetching(let task, let generation):
            do {
                let credentials = try await task.value
                self.settle(userID, generation: generation, with: credentials)
                return credentials
            } catch {
                self.settle(userID, generation: generation, with: nil)
                throw error
            }
        }
    }

    /// Forgets the user's credentials (and a fetch under way: its result is handed to its waiters but not kept).
    func drop(userID: String) {
        _ = self.state.withLock { $0.entries.removeValue(forKey: userID) }
    }

    /// How many users have an entry, for tests.
    package var count: Int { self.state.withLock { $0.entries.count } }

    /// Replaces the pending entry of `generation` with its result (or removes it after a failure); an entry dropped or
    /// replaced meanwhile stays as it is.
    private func settle(_ userID: String, generation: UInt64, with credentials: AssumeRoleResponse?) {
        let now = self.clock.now()
        self.state.withLock { state in
            guard case .pending(_, let pending) = state.entries[userID], pending == generation else { return }
            state.entries[userID] = credentials.map { .ready($0) }
            if state.entries.count > self.capacity { Self.evict(&state, now: now, keeping: self.capacity) }
        }
    }

    /// Removes expired entries, then the ones that expire soonest, until `capacity` remain.
    private static func evict(_ state: inout State, now: Date, keeping capacity: Int) {
        var ready: [(String, Date)] = []
        for (user, entry) in state.entries {
            guard case .ready(let credentials) = entry else { continue }
            if credentials.expiration.timeIntervalSince(now) <= Self.margin {
                state.entries.removeValue(forKey: user)
            } else {
                ready.append((user, credentials.expiration))
            }
        }
        let excess = state.entries.count - capacity
        guard excess > 0 else { return }
        for (user, _) in ready.sorted(by: { $0.1 < $1.1 }).prefix(excess) { state.entries.removeValue(forKey: user) }
    }
}
