import Foundation
import LatchkeyAPI
import SQLKit

/// A live session as its user sees it: where they are signed in.
package struct AccountSessionRecord: Sendable, Equatable {
    package var id: String
    package var deviceID: String?
    /// How it began (``SessionMethod``): stored, or told by its `amr` for a session stored before methods were.
    package var method: String
    package var createdAt: Date
    /// When it was created or last refreshed.
    package var lastUsedAt: Date
}

/// The signed-in user's own view of their sessions: listing the live ones and ending one.
package protocol AccountSessionStore: Sendable {
    /// The user's live sessions (not ended, a refresh token still valid at `now`), newest first.
    func liveSessions(ofUser userID: String, at now: Date) async throws -> [AccountSessionRecord]
    /// Ends the session `id` when it is one of the user's live sessions, as a logout does (its tokens refused, its
    /// sockets told `session.revoked` with reason `logout`); returns whether it was.
    func endSession(id: String, ofUser userID: String, at time: Date) async throws -> Bool
}

extension SQLLatchkeyStore: AccountSessionStore {
    package func liveSessions(ofUser userID: String, at now: Date) async throws -> [AccountSessionRecord] {
        try await self.database.readStatement { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.sessionColumns), s.method, s.last_used_at FROM sessions s
                WHERE s.user_id = \(bind: userID) AND \(Self.isLive(at: now))
                """
            ).all().map { row in
                let session = try Self.session(from: row)
                return AccountSessionRecord(
                    id: session.id, deviceID: session.deviceID,
                    method: try row.optionalString("method") ?? SessionMethod.of(amr: SessionService.amr(of: session)),
                    createdAt: session.createdAt, lastUsedAt: try row.optionalDate("last_used_at") ?? session.createdAt)
            }
            // Sorted here, not by ORDER BY, as the profile's devices are (SQLite would prepare the statement every call).
            .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        }
    }

    package func endSession(id: String, ofUser userID: String, at time: Date) async throws -> Bool {
        try await self.changing { sql, changes in
            try await !Self.revokeSessions(
                where: """
                    id = \(bind: id) AND user_id = \(bind: userID)
                    AND EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id AND r.expires_at > \(bind: time.stored))
                    """,
                reason: "logout", at: time, on: sql, noting: changes
            ).isEmpty
        }
    }

    /// The condition of a live session `s`: not ended, and a refresh token of it still valid at `now`.
    private static func isLive(at now: Date) -> SQLQueryString {
        """
        s.revoked_at IS NULL AND EXISTS (
            SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id AND r.expires_at > \(bind: now.stored))
        """
    }
}
