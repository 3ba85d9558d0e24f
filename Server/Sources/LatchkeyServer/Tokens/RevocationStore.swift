import Foundation
import SQLKit

/// What a revocation covers: one session's tokens, every token of a user, or every token a signing key signed.
package enum RevocationScope: String, Sendable {
    case session
    case user
    case key
}

/// One entry of the revocation feed.
package struct RevocationEvent: Sendable, Equatable {
    package var sequence: Int
    package var scope: RevocationScope
    package var value: String
}

extension RevocationEvent {
    /// What entries of `scope` mean to the subscribers of ``StoreChanges``.
    static func changes(scope: RevocationScope, values: [String]) -> [StoreChange] {
        switch scope {
        case .session: [.sessionsRevoked(values)]
        case .user: values.map(StoreChange.userDeleted)
        case .key: values.map(StoreChange.keyRevoked)
        }
    }
}

/// The revocation feed: every process appends what it revokes, in the same transaction as the
/// revocation, and every server process reads what others appended to clear its verification cache.
package protocol RevocationStore: Sendable {
    /// The newest sequence number, or 0.
    func latestRevocationSequence() async throws -> Int
    /// Entries after `sequence`, oldest first.
    func revocations(after sequence: Int, limit: Int) async throws -> [RevocationEvent]
    /// Calls `wake` each time another process commits revocations, until the calling task is cancelled; throws
    /// when the connection fails. Answers `false` at once where the database cannot notify (SQLite: poll only).
    func followRevocations(_ wake: @escaping @Sendable () -> Void) async throws -> Bool
}

extension SQLLatchkeyStore: RevocationStore {
    package func latestRevocationSequence() async throws -> Int {
        try await self.database.read { sql in
            try await sql.raw("SELECT COALESCE(MAX(seq), 0) AS latest FROM revocations").first()?.decode(column: "latest", as: Int.self) ?? 0
        }
    }

    package func revocations(after sequence: Int, limit: Int) async throws -> [RevocationEvent] {
        try await self.database.read { sql in
            try await sql.raw("SELECT seq, scope, value FROM revocations WHERE seq > \(bind: sequence) ORDER BY seq LIMIT \(bind: limit)")
                .all().compactMap { row in
                    guard let scope = RevocationScope(rawValue: try row.string("scope")) else { return nil }
                    return RevocationEvent(sequence: try row.decode(column: "seq", as: Int.self), scope: scope, value: try row.string("value"))
                }
        }
    }

    package func followRevocations(_ wake: @escaping @Sendable () -> Void) async throws -> Bool {
        try await self.database.listen(channel: Self.revocationChannel) { _ in wake() }
    }

    /// The PostgreSQL channel writers of the feed notify at commit.
    static let revocationChannel = "latchkey_revocations"

    /// Appends to the feed, and notes the change for this process's subscribers (``StoreChanges``); call it last in a
    /// transaction run by ``SQLLatchkeyStore/changing(_:)``.
    ///
    /// On PostgreSQL sequence numbers are handed out at insert but become visible at commit, so a reader
    /// could see 7 before 6 commits and skip 6 for good. A table lock, held to the commit, makes the
    /// writers of the feed take turns, so entries become visible in sequence order. (Readers do not wait.)
    static func recordRevocation(
        scope: RevocationScope, values: [String], at time: Date, on sql: any SQLDatabase, noting changes: StoreChanges.Notes
    ) async throws {
        guard !values.isEmpty else { return }
        for change in RevocationEvent.changes(scope: scope, values: values) { changes.note(change) }
        if sql.dialect.name == "postgresql" {
            try await sql.raw("LOCK TABLE revocations IN SHARE ROW EXCLUSIVE MODE").run()
        }
        for value in values {
            try await sql.raw(
                "INSERT INTO revocations (scope, value, created_at) VALUES (\(bind: scope.rawValue), \(bind: value), \(bind: time.stored))"
            ).run()
        }
        if sql.dialect.name == "postgresql" {
            // Delivered at commit (and not at all on rollback): listening processes read the feed at once.
            try await sql.raw("NOTIFY \(unsafeRaw: Self.revocationChannel)").run()
        }
    }
}
