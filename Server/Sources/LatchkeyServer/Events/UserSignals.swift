import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// A change to a user that event sockets report and that ends nothing (endings travel through the revocation feed).
package enum UserChange: Sendable, Equatable {
    /// Usage was recorded or the limit set: `budget.changed`.
    case budget
    /// An identity was linked to the user: `identity.linked`.
    case identityLinked(provider: String)
}

/// Tells listeners (``EventHub``) of ``UserChange``s: those this process committed, at once after the commit, and on
/// PostgreSQL those other processes committed, through a notification sent in the writing transaction (``UserChangeFeed``).
///
/// On SQLite only this process's changes are heard: the CLI changes no budget and links no identity, and one server
/// serves one SQLite file. Deletions and revocations reach every process through the revocation feed.
package final class UserSignals: Sendable {
    /// This process's mark on its notifications, so it does not hear its own twice.
    let origin = UUID().uuidString
    private let listeners = Mutex<[@Sendable (UserChange, String) -> Void]>([])

    package init() {}

    package func listen(_ listener: @escaping @Sendable (UserChange, String) -> Void) {
        self.listeners.withLock { $0.append(listener) }
    }

    /// Tells the listeners; call it after the change committed.
    package func emit(_ change: UserChange, userID: String) {
        for listener in self.listeners.withLock({ $0 }) { listener(change, userID) }
    }

    /// The PostgreSQL channel of changes.
    static let channel = "latchkey_user_events"

    /// Inside the writing transaction: on PostgreSQL, a notification the other processes receive at commit.
    func notify(_ change: UserChange, userID: String, on sql: any SQLDatabase) async throws {
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: self.payload(change, userID: userID)))").run()
    }

    /// `<origin> budget <user>` or `<origin> linked <user> <provider>`: IDs are UUIDs and provider names have no spaces.
    func payload(_ change: UserChange, userID: String) -> String {
        switch change {
        case .budget: "\(self.origin) budget \(userID)"
        case .identityLinked(let provider): "\(self.origin) linked \(userID) \(provider)"
        }
    }

    /// A notification from another process (this process's own are skipped: they were told at commit).
    func received(_ payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] != self.origin else { return }
        switch (parts[1], parts.count) {
        case ("budget", 3): self.emit(.budget, userID: parts[2])
        case ("linked", 4): self.emit(.identityLinked(provider: parts[3]), userID: parts[2])
        default: return
        }
    }
}

/// Listens for other processes' ``UserChange``s on PostgreSQL and hands them to ``UserSignals``; on SQLite it waits.
package struct UserChangeFeed: Service {
    let database: any LatchkeyDatabase
    let signals: UserSignals
    /// How long to wait before listening again after the connection failed.
    let retryInterval: TimeInterval
    let logger: Logger

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await followNotifications(
                retryInterval: self.retryInterval, logger: self.logger,
                warning:
                    "listening for user changes failed; event sockets of this process miss other processes' budget and linking events until it is back"
            ) { try await self.database.listen(channel: UserSignals.channel) { self.signals.received($0) } }
        }
        // No notifications here (SQLite), or shutting down: a service that returns would stop the whole group.
        try await gracefulShutdown()
    }
}
