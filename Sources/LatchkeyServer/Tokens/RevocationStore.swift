import Foundation
import SQLKit

/// What a revocation covers: one session's tokens, or every token of a user.
public enum RevocationScope: String, Sendable {
    case session
    case user
}

/// One entry of the revocation feed.
public struct RevocationEvent: Sendable, Equatable {
    public var sequence: Int
    public var scope: RevocationScope
    public var value: String
}

/// The revocation feed: every process appends what it revokes, in the same transaction as the
/// revocation, and every server process reads what others appended to clear its verification cache.
public protocol RevocationStore: Sendable {
    /// The newest sequence number, or 0.
    func latestRevocationSequence() async throws -> Int
    /// Entries after `sequence`, oldest first.
    func revocations(after sequence: Int, limit: Int) async throws -> [RevocationEvent]
    /// Deletes entries older than `time`.
    func pruneRevocations(before time: Date) async throws
}

extension SQLLatchkeyStore: RevocationStore {
    public func latestRevocationSequence() async throws -> Int {
        try await self.database.read { sql in
            try await sql.raw("SELECT COALESCE(MAX(seq), 0) AS latest FROM revocations").first()?.decode(column: "latest", as: Int.self) ?? 0
        }
    }

    public func revocations(after sequence: Int, limit: Int) async throws -> [RevocationEvent] {
        try await self.database.read { sql in
            try await sql.raw("SELECT seq, scope, value FROM revocations WHERE seq > \(bind: sequence) ORDER BY seq LIMIT \(bind: limit)")
                .all().compactMap { row in
                    guard let scope = RevocationScope(rawValue: try row.string("scope")) else { return nil }
                    return RevocationEvent(sequence: try row.decode(column: "seq", as: Int.self), scope: scope, value: try row.string("value"))
                }
        }
    }

    public func pruneRevocations(before time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM revocations WHERE created_at < \(bind: time.stored)").run()
        }
    }

    static func recordRevocation(scope: RevocationScope, values: [String], at time: Date, on sql: any SQLDatabase) async throws {
        for value in values {
            try await sql.raw(
                "INSERT INTO revocations (scope, value, created_at) VALUES (\(bind: scope.rawValue), \(bind: value), \(bind: time.stored))"
            ).run()
        }
    }
}
