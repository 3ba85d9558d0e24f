import Logging
import SQLKit

/// The SQL database behind every store.
///
/// Each `transaction` is all-or-nothing: a thrown error rolls it back, so a request either changes
/// everything it meant to or nothing.
@available(LatchkeyServer 1.0, *)
public protocol LatchkeyDatabase: Sendable {
    /// Runs `body` in one transaction.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs read-only statements that need no transaction.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Closes the connection(s).
    func close() async
    /// Which SQL dialect the database speaks, for the few statements that differ.
    var dialect: DatabaseDialect { get }
    /// Calls `wake` for each notification on `channel` (PostgreSQL's LISTEN) until the calling task is cancelled;
    /// throws when the connection fails. Answers `false` at once where the database has no notifications.
    func listen(channel: String, _ wake: @escaping @Sendable () -> Void) async throws -> Bool
}

@available(LatchkeyServer 1.0, *)
extension LatchkeyDatabase {
    /// No notifications (SQLite): callers poll.
    public func listen(channel: String, _ wake: @escaping @Sendable () -> Void) async throws -> Bool { false }
}

/// The SQL dialects Latchkey stores speak.
@available(LatchkeyServer 1.0, *)
public enum DatabaseDialect: Sendable {
    case sqlite
    case postgresql
}

/// Failures of the storage layer, translated into HTTP statuses by the routes.
@available(LatchkeyServer 1.0, *)
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A uniqueness rule was broken (the row exists already).
    case conflict
    /// The database did not answer or failed; the operation had no effect.
    case unavailable(String)

    public var description: String {
        switch self {
        case .conflict: "the row exists already"
        case .unavailable(let reason): "database unavailable: \(reason)"
        }
    }
}

@available(LatchkeyServer 1.0, *)
extension LatchkeyDatabase {
    /// Succeeds when the database answers a trivial query.
    public func ping() async throws {
        _ = try await self.read { sql in try await sql.raw("SELECT 1 AS one").first() != nil }
    }
}
