import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// What a committed write changed, as the caches and the event hub hear it (``StoreChanges``).
package enum StoreChange: Sendable, Equatable {
    /// These sessions ended (logout, reuse detection, a reset, support): their tokens stop working.
    case sessionsRevoked([String])
    /// Every session of the user ended (a global logout, a password reset, support ending them all): what a process
    /// keeps for the user's sessions (vended storage credentials) goes too.
    case userSignedOut(String)
    /// The user was deleted: every token of theirs stops working, access codes included.
    case userDeleted(String)
    /// The signing key with this `kid` was revoked: every token it signed stops working.
    case keyRevoked(String)
    /// The access code with this ID (`jti`) was revoked.
    case accessCodeRevoked(String)
    /// Something the user's profile shows changed (a device, an address, a session's last use).
    case userChanged(String)
    /// The user's usage was recorded or their limit set: `budget.changed`.
    case budgetChanged(String)
    /// An identity of `provider` was linked to the user: `identity.linked`.
    case identityLinked(userID: String, provider: String)
    /// What the user's next access token carries changed (`app_metadata`), or the backend asked their apps to refresh:
    /// `claims.changed`.
    case claimsChanged(String)

    /// The user the change is about, when it is about one.
    package var userID: String? {
        switch self {
        case .userSignedOut(let id), .userDeleted(let id), .userChanged(let id), .budgetChanged(let id), .claimsChanged(let id): id
        case .identityLinked(let id, _): id
        case .sessionsRevoked, .keyRevoked, .accessCodeRevoked: nil
        }
    }
}

/// The storage layer's after-commit change feed: the one way the caches (token verification, profiles, storage
/// credentials) and the event hub learn what changed, each subscribing once.
///
/// A store notes its changes inside the writing transaction (``SQLLatchkeyStore/changing(_:)``); they are published
/// here once it committed, and not at all when it rolled back. Other processes' changes arrive through
/// ``received(_:)``: endings (sessions, users, keys) from the revocation feed table, usage and linking from a
/// PostgreSQL notification sent in the writing transaction (``StoreChangeFeed``). On SQLite only this process's usage
/// and linking are heard: the CLI records no usage and links no identity, and one server serves one SQLite file.
///
/// Subscribers are called in the order they subscribed, synchronously, in the task that published: they must only
/// update memory or hand the change to a task of their own. The verification cache subscribes first, so anything a
/// later subscriber verifies already misses the ended tokens.
package final class StoreChanges: Sendable {
    /// What one transaction noted; kept only when it commits (a retried transaction starts it over).
    package final class Notes: Sendable {
        private let noted = Mutex<[StoreChange]>([])

        /// Notes `change`, to be published when the transaction commits.
        package func note(_ change: StoreChange) { self.noted.withLock { $0.append(change) } }

        fileprivate func reset() { self.noted.withLock { $0 = [] } }
        fileprivate var all: [StoreChange] { self.noted.withLock { $0 } }
    }

    /// This process's mark on its notifications, so it does not hear its own twice.
    let origin = UUID().uuidString
    private let subscribers = Mutex<[@Sendable (StoreChange) -> Void]>([])

    package init() {}

    /// Calls `subscriber` with every change from now on, this process's and (where the database tells) others'.
    package func subscribe(_ subscriber: @escaping @Sendable (StoreChange) -> Void) {
        self.subscribers.withLock { $0.append(subscriber) }
    }

    /// Tells the subscribers of changes this process committed (or, for ``StoreChange/userChanged(_:)`` after a write
    /// whose outcome is unknown, may have committed).
    package func publish(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        let subscribers = self.subscribers.withLock { $0 }
        for change in changes {
            for subscriber in subscribers { subscriber(change) }
        }
    }

    /// Tells the subscribers of changes another process committed.
    package func received(_ changes: [StoreChange]) { self.publish(changes) }

    /// The PostgreSQL channel of usage, linking and claims changes.
    static let channel = "latchkey_user_events"

    /// Inside the writing transaction: on PostgreSQL, a notification for each change other processes hear this way
    /// (usage, linking), delivered at commit. Endings reach them through the revocation feed table instead.
    fileprivate func notify(_ changes: [StoreChange], on sql: any SQLDatabase) async throws {
        guard sql.dialect.name == "postgresql" else { return }
        for change in changes {
            guard let payload = self.payload(change) else { continue }
            try await sql.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: payload))").run()
        }
    }

    /// `<origin> budget <user>`, `<origin> claims <user>` or `<origin> linked <user> <provider>` (IDs are UUIDs, provider names have no spaces);
    /// nil for changes that do not travel this way.
    func payload(_ change: StoreChange) -> String? {
        switch change {
        case .budgetChanged(let userID): "\(self.origin) budget \(userID)"
        case .claimsChanged(let userID): "\(self.origin) claims \(userID)"
        case .identityLinked(let userID, let provider): "\(self.origin) linked \(userID) \(provider)"
        default: nil
        }
    }

    /// A notification from another process (this process's own are skipped: they were published at commit).
    func received(payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] != self.origin else { return }
        switch (parts[1], parts.count) {
        case ("budget", 3): self.received([.budgetChanged(parts[2])])
        case ("claims", 3): self.received([.claimsChanged(parts[2])])
        case ("linked", 4): self.received([.identityLinked(userID: parts[2], provider: parts[3])])
        default: return
        }
    }
}

extension SQLLatchkeyStore {
    /// Runs `body` in one transaction and, once it committed, publishes what it noted (``StoreChanges``); on
    /// PostgreSQL the changes other processes hear by notification are sent inside it, so they arrive at commit.
    func changing<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase, StoreChanges.Notes) async throws -> T) async throws -> T {
        let notes = StoreChanges.Notes()
        let result = try await self.database.transaction { sql in
            notes.reset()
            let result = try await body(sql, notes)
            try await self.changes.notify(notes.all, on: sql)
            return result
        }
        self.changes.publish(notes.all)
        return result
    }
}

/// Listens for other processes' usage and linking changes on PostgreSQL and hands them to ``StoreChanges``; on SQLite
/// it waits.
package struct StoreChangeFeed: Service {
    let database: any LatchkeyDatabase
    let changes: StoreChanges
    /// How long to wait before listening again after the connection failed.
    let retryInterval: TimeInterval
    let logger: Logger

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await followNotifications(
                retryInterval: self.retryInterval, logger: self.logger,
                warning:
                    "listening for user changes failed; event sockets of this process miss other processes' budget and linking events until it is back"
            ) { try await self.database.listen(channel: StoreChanges.channel) { self.changes.received(payload: $0) } }
        }
        // No notifications here (SQLite), or shutting down: a service that returns would stop the whole group.
        try await gracefulShutdown()
    }
}
