import Foundation
import SQLKit

/// Access codes' bookkeeping: who they are for, when they expire, whether they were revoked.
package protocol AccessCodeStore: AccessCodeLookup {
    /// Records a new code; ``ServiceError/userDisabled`` when its user is disabled (a disabled user gets no new bearer).
    func insertAccessCode(_ code: AccessCodeRecord) async throws
    func accessCodes() async throws -> [AccessCodeRecord]
    /// The codes issued for `userID`, newest first.
    func accessCodes(ofUser userID: String) async throws -> [AccessCodeRecord]
    /// Revokes the code and ends the sessions exchanged from it; returns the code and those sessions' IDs, or nil when
    /// there is no such code.
    func revokeAccessCode(id: String, at time: Date) async throws -> (code: AccessCodeRecord, revokedSessions: [String])?
}

extension SQLLatchkeyStore: AccessCodeStore {
    package func insertAccessCode(_ code: AccessCodeRecord) async throws {
        try await self.database.transaction { sql in
            // A disabled user gets no new bearer: codes that existed when they were disabled were revoked with them.
            let row = try await sql.raw("SELECT disabled_at FROM users WHERE id = \(bind: code.userID)").first()
            guard try row?.optionalDate("disabled_at") == nil else { throw ServiceError.userDisabled }
            try await sql.raw(
                """
                INSERT INTO access_codes (id, user_id, note, created_at, expires_at)
                VALUES (\(bind: code.id), \(bind: code.userID), \(bind: code.note), \(bind: code.createdAt.stored),
                        \(bind: code.expiresAt.stored))
                """
            ).run()
        }
    }

    package func accessCode(id: String) async throws -> AccessCodeRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM access_codes WHERE id = \(bind: id)").first().map(Self.accessCode(from:))
        }
    }

    package func accessCodes() async throws -> [AccessCodeRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM access_codes ORDER BY created_at, id").all().map(Self.accessCode(from:))
        }
    }

    package func accessCodes(ofUser userID: String) async throws -> [AccessCodeRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM access_codes WHERE user_id = \(bind: userID) ORDER BY created_at DESC, id")
                .all().map(Self.accessCode(from:))
        }
    }

    package func revokeAccessCode(id: String, at time: Date) async throws -> (code: AccessCodeRecord, revokedSessions: [String])? {
        try await self.changing { sql, changes in
            guard
                let code = try await sql.raw(
                    "UPDATE access_codes SET revoked_at = COALESCE(revoked_at, \(bind: time.stored)) WHERE id = \(bind: id) RETURNING *"
                ).first().map(Self.accessCode(from:))
            else { return nil }
            changes.note(.accessCodeRevoked(id))
            return (
                code,
                try await Self.revokeSessions(
                    where: "access_code_id = \(bind: id)", reason: "access_code_revoked", at: time, on: sql, noting: changes)
            )
        }
    }

    static func accessCode(from row: any SQLRow) throws -> AccessCodeRecord {
        AccessCodeRecord(
            id: try row.string("id"), userID: try row.string("user_id"), note: try row.optionalString("note"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"), revokedAt: try row.optionalDate("revoked_at"))
    }
}
