import Foundation
import SQLKit

/// The one SQL implementation of every store protocol, over SQLite or PostgreSQL.
///
/// Each aggregate's conformance lives beside its feature (`Users/UserStore.swift`, …).
package final class SQLLatchkeyStore: Sendable {
    let database: any LatchkeyDatabase
    /// Recently read profiles; it follows ``changes``, so every write to what a profile shows drops the user's.
    package let profiles: ProfileCache
    /// What committed writes changed, for the caches and the event hub.
    package let changes: StoreChanges

    package init(database: any LatchkeyDatabase, profiles: ProfileCache = .off(), changes: StoreChanges = StoreChanges()) {
        self.database = database
        self.profiles = profiles
        self.changes = changes
        profiles.follow(changes)
    }

    /// Makes concurrent transactions that name the same `key` take turns, until the end of the transaction.
    ///
    /// For count-then-insert rules (rate limits, budgets): on PostgreSQL two transactions would
    /// otherwise both count the same rows under READ COMMITTED. SQLite runs one write transaction at a
    /// time already, so there it does nothing.
    static func serialize(on key: String, _ sql: any SQLDatabase) async throws {
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT pg_advisory_xact_lock(hashtextextended(\(bind: key), 0))").run()
    }
}

extension SQLLatchkeyStore {
    /// `text` with LIKE's wildcards and the escape character escaped, for a pattern written with `ESCAPE '\'`.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
}

extension SQLRow {
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try self.decode(column: column, as: Double.self))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try self.decode(column: column, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }

    func string(_ column: String) throws -> String {
        try self.decode(column: column, as: String.self)
    }

    func optionalString(_ column: String) throws -> String? {
        try self.decode(column: column, as: String?.self)
    }
}

extension Date {
    /// The stored form of a time.
    var stored: Double { self.timeIntervalSince1970 }
}
