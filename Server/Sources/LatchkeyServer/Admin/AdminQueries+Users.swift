import Foundation
import LatchkeyAPI
import SQLKit

/// What the console's users list filters by; nil or empty: no filter.
package struct AdminUserFilter: Sendable, Equatable {
    /// A user or device UUID, part of an email address, or a provider subject.
    package var text: String = ""
    package var kind: String?
    /// An identity provider (`apple`, `google`…), or `email` for an email and password account.
    package var provider: String?
    /// true: only disabled users; false: only enabled ones.
    package var disabled: Bool?
}

/// A row of the console's users list.
package struct AdminUserRow: Sendable, Equatable {
    package var id: String
    package var kind: String
    package var createdAt: Date
    package var disabledAt: Date?
    package var email: String?
    /// The identity providers, with `email` for an email account; sorted.
    package var providers: [String]
    package var devices: Int
    /// The latest of a device's last sight and a session's last use.
    package var lastSeenAt: Date?
}

extension SQLLatchkeyStore {
    /// A page of users matching `filter`, newest first, filtered, counted and paged by the database (`limit` + 1 rows
    /// tell whether there are more).
    func adminUsers(_ filter: AdminUserFilter, limit: Int, offset: Int) async throws -> [AdminUserRow] {
        try await self.database.read { sql in
            var conditions: [SQLQueryString] = []
            let text = filter.text.trimmingCharacters(in: .whitespaces)
            if !text.isEmpty {
                let lowered = text.lowercased()
                let pattern = "%" + Self.likeEscaped(lowered) + "%"
                conditions.append(
                    """
                    u.id IN (
                        SELECT id FROM users WHERE id = \(bind: lowered)
                        UNION SELECT user_id FROM devices WHERE id = \(bind: lowered)
                        UNION SELECT user_id FROM email_accounts WHERE email_key LIKE \(bind: pattern) ESCAPE '\\'
                        UNION SELECT user_id FROM identities WHERE subject = \(bind: text) OR LOWER(email) LIKE \(bind: pattern) ESCAPE '\\')
                    """)
            }
            if let kind = filter.kind, !kind.isEmpty { conditions.append("u.kind = \(bind: kind)") }
            if let provider = filter.provider, !provider.isEmpty {
                conditions.append(
                    provider == "email"
                        ? "EXISTS (SELECT 1 FROM email_accounts e WHERE e.user_id = u.id)"
                        : "EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id AND i.provider = \(bind: provider))")
            }
            if let disabled = filter.disabled { conditions.append(disabled ? "u.disabled_at IS NOT NULL" : "u.disabled_at IS NULL") }
            let filtering: SQLQueryString = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try await sql.raw(
                """
                SELECT u.id, u.kind, u.created_at, u.disabled_at,
                    (SELECT e.email FROM email_accounts e WHERE e.user_id = u.id) AS email,
                    (SELECT COUNT(*) FROM devices d WHERE d.user_id = u.id) AS device_count,
                    (SELECT MAX(d.last_seen_at) FROM devices d WHERE d.user_id = u.id) AS device_seen_at,
                    (SELECT MAX(COALESCE(s.last_used_at, s.created_at)) FROM sessions s WHERE s.user_id = u.id) AS session_used_at
                FROM users u \(filtering)
                ORDER BY u.created_at DESC, u.id LIMIT \(bind: limit) OFFSET \(bind: offset)
                """
            ).all()
            var users = try rows.map { row in
                let seen = [try row.optionalDate("device_seen_at"), try row.optionalDate("session_used_at")].compactMap { $0 }.max()
                let email = try row.optionalString("email")
                return AdminUserRow(
                    id: try row.string("id"), kind: try row.string("kind"), createdAt: try row.date("created_at"),
                    disabledAt: try row.optionalDate("disabled_at"), email: email, providers: email == nil ? [] : ["email"],
                    devices: try row.decode(column: "device_count", as: Int.self), lastSeenAt: seen)
            }
            guard !users.isEmpty else { return [] }
            // The page's providers in one more query (at most a page of users).
            let ids: SQLQueryString = users.map { "\(bind: $0.id)" as SQLQueryString }.joined(separator: ", ")
            let identities = try await sql.raw("SELECT user_id, provider FROM identities WHERE user_id IN (\(ids))").all()
            for identity in identities {
                let (user, provider) = (try identity.string("user_id"), try identity.string("provider"))
                if let index = users.firstIndex(where: { $0.id == user }), !users[index].providers.contains(provider) {
                    users[index].providers.append(provider)
                }
            }
            return users.map { row in
                var row = row
                row.providers.sort()
                return row
            }
        }
    }

    /// The providers the users list offers as a filter: every identity provider in use, and `email`.
    func adminProviders() async throws -> [String] {
        try await self.database.read { sql in
            let providers = try await sql.raw("SELECT DISTINCT provider FROM identities ORDER BY provider").all().map { try $0.string("provider") }
            return (providers + ["email"]).sorted()
        }
    }
}
