import Foundation
import LatchkeyAPI
import SQLKit

/// The overview's figures: totals now and activity per hour over the last 24 hours.
package struct AdminOverview: Sendable, Equatable {
    package var users: Int
    package var devices: Int
    package var liveSessions: Int
    /// Sessions begun (sign-ins) and refresh tokens used (refreshes) per hour, oldest first; 24 entries.
    package var signInsPerHour: [Int]
    package var refreshesPerHour: [Int]
}

/// A session as the console lists it.
package struct AdminSessionRow: Sendable, Equatable {
    package var id: String
    package var deviceID: String?
    package var createdAt: Date
    package var lastRefreshAt: Date?
    package var revokedAt: Date?
    package var revokedReason: String?
    /// How the session began (`device`, `password`, `apple`, `passkey`…): stored since migration 18, else told by the
    /// first entry of its `amr`.
    package var method: String?
    /// When the session was last used (its creation, then each refresh); stored since migration 18.
    package var lastUsedAt: Date?

    /// The method of a session stored before `sessions.method` existed, from its `amr` (space-separated).
    static func method(amr: String?) -> String? {
        guard let amr, !amr.isEmpty else { return nil }
        return SessionMethod.of(amr: amr.split(separator: " ").map { AuthenticationMethod(rawValue: String($0)) })
    }
}

/// Reads of the admin console that no other part needs: totals, activity, search, a user's sessions.
extension SQLLatchkeyStore {
    func adminOverview(at now: Date) async throws -> AdminOverview {
        let since = now.addingTimeInterval(-86_400)
        return try await self.database.read { sql in
            func count(_ statement: SQLQueryString) async throws -> Int {
                try await sql.raw(statement).first()?.decode(column: "n", as: Int.self) ?? 0
            }
            /// Rows of `table` whose `column` lies in each hour since `since`, counted by the database (the newest
            /// hour holds its end, now, too).
            func perHour(_ column: String, in table: String) async throws -> [Int] {
                let hours: [SQLQueryString] = (0..<24).map { hour in
                    let start = since.stored + Double(hour) * 3600
                    let end: SQLQueryString = hour == 23 ? "" : " AND \(ident: column) < \(bind: start + 3600)"
                    return "SUM(CASE WHEN \(ident: column) >= \(bind: start)\(end) THEN 1 ELSE 0 END) AS \(ident: "h\(hour)")"
                }
                let row = try await sql.raw(
                    """
                    SELECT \(hours.joined(separator: ", ")) FROM \(ident: table)
                    WHERE \(ident: column) > \(bind: since.stored) AND \(ident: column) <= \(bind: now.stored)
                    """
                ).first()
                return try (0..<24).map { try row?.decode(column: "h\($0)", as: Int?.self) ?? 0 }
            }
            let users = try await count("SELECT COUNT(*) AS n FROM users")
            let devices = try await count("SELECT COUNT(*) AS n FROM devices")
            let live = try await count(
                """
                SELECT COUNT(*) AS n FROM sessions s WHERE s.revoked_at IS NULL AND EXISTS (
                    SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id AND r.used_at IS NULL AND r.expires_at > \(bind: now.stored))
                """)
            let signIns = try await perHour("created_at", in: "sessions")
            let refreshes = try await perHour("used_at", in: "refresh_tokens")
            return AdminOverview(users: users, devices: devices, liveSessions: live, signInsPerHour: signIns, refreshesPerHour: refreshes)
        }
    }

    /// Users whose ID or a device's ID is `query` (a UUID), whose email address contains it, or who have an identity
    /// with it as subject; with an empty query, every user, newest first. `limit` + 1 rows tell whether there are more.
    func searchUsers(_ query: String, limit: Int, offset: Int) async throws -> [UserRecord] {
        let text = query.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else {
            return try await self.database.read { sql in
                try await sql.raw("SELECT id, kind, created_at FROM users ORDER BY created_at DESC, id LIMIT \(bind: limit) OFFSET \(bind: offset)")
                    .all().map(Self.user(from:))
            }
        }
        let lowered = text.lowercased()
        let pattern = "%" + Self.likeEscaped(lowered) + "%"
        return try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT id, kind, created_at FROM users WHERE id IN (
                    SELECT id FROM users WHERE id = \(bind: lowered)
                    UNION SELECT user_id FROM devices WHERE id = \(bind: lowered)
                    UNION SELECT user_id FROM email_accounts WHERE email_key LIKE \(bind: pattern) ESCAPE '\\'
                    UNION SELECT user_id FROM identities WHERE subject = \(bind: text) OR LOWER(email) LIKE \(bind: pattern) ESCAPE '\\')
                ORDER BY created_at DESC, id LIMIT \(bind: limit) OFFSET \(bind: offset)
                """
            ).all().map(Self.user(from:))
        }
    }

    /// The sessions of `userID`, newest first, with the time of their last refresh.
    func adminSessions(ofUser userID: String, limit: Int) async throws -> [AdminSessionRow] {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT s.id, s.device_id, s.created_at, s.revoked_at, s.revoked_reason, s.method, s.amr, s.last_used_at,
                    (SELECT MAX(r.used_at) FROM refresh_tokens r WHERE r.session_id = s.id) AS last_refresh_at
                FROM sessions s WHERE s.user_id = \(bind: userID) ORDER BY s.created_at DESC, s.id LIMIT \(bind: limit)
                """
            ).all().map { row in
                AdminSessionRow(
                    id: try row.string("id"), deviceID: try row.optionalString("device_id"), createdAt: try row.date("created_at"),
                    lastRefreshAt: try row.optionalDate("last_refresh_at"), revokedAt: try row.optionalDate("revoked_at"),
                    revokedReason: try row.optionalString("revoked_reason"),
                    method: try row.optionalString("method") ?? AdminSessionRow.method(amr: try row.optionalString("amr")),
                    lastUsedAt: try row.optionalDate("last_used_at"))
            }
        }
    }

    func userOfSession(_ sessionID: String) async throws -> String? {
        try await self.database.read { sql in
            try await sql.raw("SELECT user_id FROM sessions WHERE id = \(bind: sessionID)").first()?.string("user_id")
        }
    }
}
