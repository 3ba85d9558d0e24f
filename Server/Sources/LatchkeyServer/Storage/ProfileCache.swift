import Foundation
import Synchronization

/// Profiles read in the last `ttl` seconds, so that the `users/me` every launch and refresh asks for is not a database
/// read each time (`cache.profile-ttl`, `cache.profile-capacity`).
///
/// It follows the store's ``StoreChanges``: a profile is dropped at once when this process writes anything it shows (a
/// device signing in or refreshing, linking or unlinking an identity, budget usage or limit, deletion), when the
/// revocation feed reports the user deleted by another process, and on PostgreSQL when another process's usage, limit
/// or link is notified. What another process changes otherwise shows here within `ttl`. Nothing that gates a decision
/// reads it: budgets are enforced by the database, tokens by the verifier.
package final class ProfileCache: Sendable {
    private struct Entry {
        let profile: UserProfileRecord
        let readAt: Date
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Counts invalidations: a read that began before one must not store what it read.
        var invalidations: UInt64 = 0
    }

    /// What a read remembers from before it began, so that a write in between keeps its result out.
    package struct Ticket: Sendable {
        fileprivate let invalidations: UInt64
    }

    private let ttl: TimeInterval
    private let capacity: Int
    private let clock: any WallClock
    private let state = Mutex(State())

    /// A cache keeping profiles `ttl` seconds, at most `capacity` of them; `ttl` or `capacity` 0 keeps none.
    package init(ttl: TimeInterval, capacity: Int, clock: any WallClock) {
        self.ttl = max(0, ttl)
        self.capacity = max(0, capacity)
        self.clock = clock
    }

    /// No cache: every profile is read from the database.
    package static func off() -> ProfileCache { ProfileCache(ttl: 0, capacity: 0, clock: SystemClock()) }

    private var isOn: Bool { self.ttl > 0 && self.capacity > 0 }

    /// The user's profile when one was read less than `ttl` ago and nothing invalidated it since.
    func lookup(userID: String) -> UserProfileRecord? {
        guard self.isOn else { return nil }
        let now = self.clock.now()
        return self.state.withLock { state in
            guard let entry = state.entries[userID], now.timeIntervalSince(entry.readAt) < self.ttl else { return nil }
            return entry.profile
        }
    }

    /// Take before reading; hand to ``insert(_:ticket:)`` with what was read.
    func ticket() -> Ticket { Ticket(invalidations: self.state.withLock { $0.invalidations }) }

    /// Keeps `profile`, unless an invalidation came between `ticket` and now (the read may predate the write).
    func insert(_ profile: UserProfileRecord, ticket: Ticket) {
        guard self.isOn else { return }
        let now = self.clock.now()
        self.state.withLock { state in
            guard state.invalidations == ticket.invalidations else { return }
            if state.entries.count >= self.capacity {
                state.entries = state.entries.filter { now.timeIntervalSince($0.value.readAt) < self.ttl }
                if state.entries.count >= self.capacity { state.entries = [:] }
            }
            state.entries[profile.user.id] = Entry(profile: profile, readAt: now)
        }
    }

    /// Drops the profile of the user each change is about (``StoreChange/userID``), this process's changes and the
    /// deletions other processes made.
    func follow(_ changes: StoreChanges) {
        changes.subscribe { [weak self] change in
            if let userID = change.userID { self?.invalidate(userID: userID) }
        }
    }

    /// Drops the user's profile.
    func invalidate(userID: String) {
        self.state.withLock { state in
            state.invalidations &+= 1
            state.entries[userID] = nil
        }
    }

    /// How many profiles are kept, for tests.
    var count: Int { self.state.withLock { $0.entries.count } }
}
