import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// The SQL database behind every store.
///
/// Each `transaction` is all-or-nothing: a thrown error rolls it back, so a request either changes
/// everything it meant to or nothing.
///
/// A database is also a `Service`: what must run while it is used (PostgreSQL's connection pool; SQLite's WAL
/// checkpoints) runs in its `run()`, in the server's `ServiceGroup` or, for the CLI, in a task of the call.
package protocol LatchkeyDatabase: Service {
    /// Runs `body` in one transaction.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body` in one transaction without the request's deadline: it waits for locks (SQLite's writer, another
    /// process's migration) and runs however long it takes; `database.timeout` bounds only reaching the database. For
    /// the migrations at start-up, never for a request's work.
    func patientTransaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs read-only statements that need no transaction.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body`, which runs exactly one read-only statement: a statement is its own snapshot, so nothing is
    /// opened around it (SQLite: no `BEGIN`/`COMMIT`; PostgreSQL: one round trip).
    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Closes the connection(s).
    func close() async
    /// Which SQL dialect the database speaks, for the few statements that differ.
    var dialect: DatabaseDialect { get }
    /// Calls `receive` with the payload of each notification on `channel` (PostgreSQL's LISTEN) until the calling task
    /// is cancelled; throws when the connection fails. Answers `false` at once where the database has no notifications.
    func listen(channel: String, _ receive: @escaping @Sendable (String) -> Void) async throws -> Bool
    /// Why the database cannot be used now (a connection attempt of its own), or nil when it can or cannot tell.
    func diagnose() async -> DatabaseFailure?
}

extension LatchkeyDatabase {
    /// ``read(_:)``, for a database whose reads open nothing around their statements (PostgreSQL).
    package func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.read(body)
    }

    /// No notifications (SQLite): callers poll.
    package func listen(channel: String, _ receive: @escaping @Sendable (String) -> Void) async throws -> Bool { false }
}

/// Follows a database's notifications for as long as the calling task runs: calls `listen` (which returns when the task
/// is cancelled and throws when its connection fails), and after a failure listens again one `retryInterval` later,
/// calling `relistened` then so the caller can read what was committed while nobody listened. Logs `warning` once, at
/// the first failure. Returns at once when `listen` answers that the database has no notifications (SQLite).
func followNotifications(
    retryInterval: TimeInterval, logger: Logger, warning: Logger.Message, relistened: () -> Void = {},
    listen: () async throws -> Bool
) async {
    var failing = false
    while !Task.isCancelled {
        do {
            guard try await listen() else { return }
        } catch {
            if Task.isCancelled { return }
            if !failing { logger.warning(warning, metadata: ["error": "\(error)"]) }
            failing = true
        }
        do { try await Task.sleep(for: .seconds(retryInterval)) } catch { return }
        relistened()
    }
}

/// The SQL dialects Latchkey stores speak.
package enum DatabaseDialect: Sendable {
    case sqlite
    case postgresql
}

/// Failures of the storage layer, translated into HTTP statuses by the routes.
///
/// A struct, not an enum, so kinds can be added without breaking callers: match with `catch StoreError.conflict`
/// or `catch StoreError.unavailable` (any reason).
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case conflict
        case unavailable
    }

    private let base: Base
    /// Why the database failed, for logs (never a password or a token); empty for a conflict.
    public let reason: String

    private init(_ base: Base, reason: String) {
        self.base = base
        self.reason = reason
    }

    /// A uniqueness rule was broken (the row exists already).
    public static let conflict = StoreError(.conflict, reason: "")
    /// Any ``unavailable(_:)`` error, whatever its reason: for `catch StoreError.unavailable`.
    public static let unavailable = StoreError(.unavailable, reason: "")
    /// The database did not answer or failed; the operation had no effect.
    public static func unavailable(_ reason: String) -> StoreError { StoreError(.unavailable, reason: reason) }

    public var description: String {
        switch self.base {
        case .conflict: "the row exists already"
        case .unavailable: "database unavailable: \(self.reason)"
        }
    }

    /// Matches any error of the same kind, whatever its reason.
    public static func ~= (pattern: StoreError, error: any Error) -> Bool {
        (error as? StoreError)?.base == pattern.base
    }
}

extension LatchkeyDatabase {
    /// Runs `body` while this database's own service runs (PostgreSQL's pool needs it), then stops the service and
    /// closes the database, whether `body` succeeded or threw.
    package func whileRunning<T>(_ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            do {
                let result = try await body()
                group.cancelAll()
                await self.close()
                return result
            } catch {
                group.cancelAll()
                await self.close()
                throw error
            }
        }
    }

    /// Succeeds when the database answers a trivial query.
    package func ping() async throws {
        _ = try await self.read { sql in try await sql.raw("SELECT 1 AS one").first() != nil }
    }
}
