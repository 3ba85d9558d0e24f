import Foundation
import LatchkeyAPI
import SQLKit

/// Users and what hangs off them.
package protocol UserStore: Sendable {
    /// Creates the user unless it exists or its ID belonged to a deleted user; returns whether this call created it.
    func registerUser(id: String, kind: UserKind, at time: Date) async throws -> Bool
    /// When the user with this ID was deleted, if it was (and support has not freed the ID since).
    func deletedAt(userID: String) async throws -> Date?
    /// Support: lets a deleted user's ID be registered again; returns whether it was retired.
    func freeDeletedID(_ userID: String) async throws -> Bool
    func user(id: String) async throws -> UserRecord?
    func devices(ofUser userID: String) async throws -> [DeviceRecord]
    func users(limit: Int, offset: Int) async throws -> [UserRecord]
    /// The user with their devices (oldest first), identities (oldest first) and budget state (usage after
    /// `start`), read by one statement: one round trip, one snapshot.
    func profile(ofUser id: String, usageSince start: Date) async throws -> UserProfileRecord?
    /// Deletes the user with its devices, identities, sessions, refresh tokens and access codes, and retires its ID.
    func deleteUser(id: String, at time: Date) async throws -> DeletedUser?
}

extension SQLLatchkeyStore: UserStore {
    package func registerUser(id: String, kind: UserKind, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            let created =
                try await sql.raw(
                    """
                    INSERT INTO users (id, kind, created_at)
                    SELECT \(bind: id), \(bind: kind.rawValue), \(bind: time.stored)
                    WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE id = \(bind: id))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """
                ).first() != nil
            if created { try await Self.emit(.userCreated, userID: id, ["kind": kind.rawValue], at: time, on: sql) }
            return created
        }
    }

    package func deletedAt(userID: String) async throws -> Date? {
        try await self.database.read { sql in
            try await sql.raw("SELECT deleted_at FROM deleted_users WHERE id = \(bind: userID)").first()?.date("deleted_at")
        }
    }

    package func freeDeletedID(_ userID: String) async throws -> Bool {
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM deleted_users WHERE id = \(bind: userID) RETURNING id").first() != nil
        }
    }

    static func isDeleted(_ userID: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT id FROM deleted_users WHERE id = \(bind: userID)").first() != nil
    }

    package func user(id: String) async throws -> UserRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT id, kind, created_at FROM users WHERE id = \(bind: id)").first().map(Self.user(from:))
        }
    }

    package func devices(ofUser userID: String) async throws -> [DeviceRecord] {
        try await self.database.read { sql in try await Self.devices(ofUser: userID, on: sql) }
    }

    package func profile(ofUser id: String, usageSince start: Date) async throws -> UserProfileRecord? {
        if let cached = self.profiles.lookup(userID: id) { return cached }
        let ticket = self.profiles.ticket()
        guard let profile = try await self.readProfile(ofUser: id, usageSince: start) else { return nil }
        self.profiles.insert(profile, ticket: ticket)
        return profile
    }

    private func readProfile(ofUser id: String, usageSince start: Date) async throws -> UserProfileRecord? {
        // One row for the user (with the budget limit and the usage sum), one per device and one per identity; a
        // user that does not exist has no devices or identities either (ON DELETE CASCADE), so no rows at all.
        // Columns: part, a/b/c (text), t1/t2 (times), n1/n2 (numbers). The email account's row: 'e', the address, when verified.
        // An identity's row: 'i', provider, subject, the address its provider gave.
        let rows = try await self.database.readStatement { sql in
            try await sql.raw(
                """
                SELECT 'u' AS part, u.id AS a, u.kind AS b, NULL AS c, u.created_at AS t1, NULL AS t2,
                    (SELECT b.budget_limit FROM budgets b WHERE b.user_id = u.id) AS n1,
                    (SELECT COALESCE(SUM(r.amount), 0) FROM usage_records r WHERE r.user_id = u.id AND r.at > \(bind: start.stored)) AS n2
                FROM users u WHERE u.id = \(bind: id)
                UNION ALL
                SELECT 'd', d.id, d.secret_hash, d.key_thumbprint, d.created_at, d.last_seen_at, NULL, NULL
                FROM devices d WHERE d.user_id = \(bind: id)
                UNION ALL
                SELECT 'i', i.provider, i.subject, i.email, i.created_at, NULL, NULL, NULL
                FROM identities i WHERE i.user_id = \(bind: id)
                UNION ALL
                SELECT 'e', e.email, NULL, NULL, e.verified_at, NULL, NULL, NULL
                FROM email_accounts e WHERE e.user_id = \(bind: id)
                """
            ).all()
        }
        var profile: UserProfileRecord?
        var devices: [DeviceRecord] = []
        var identities: [IdentityRecord] = []
        var email: (address: String, verified: Bool)?
        for row in rows {
            switch try row.string("part") {
            case "u":
                profile = UserProfileRecord(
                    user: UserRecord(
                        id: try row.string("a"), kind: UserKind(rawValue: try row.string("b")), createdAt: try row.date("t1")),
                    devices: [], identities: [], budgetLimit: try row.decode(column: "n1", as: Double?.self),
                    usedBudget: try row.decode(column: "n2", as: Double?.self) ?? 0)
            case "d":
                devices.append(
                    DeviceRecord(
                        id: try row.string("a"), userID: id, secretHash: try row.string("b"), createdAt: try row.date("t1"),
                        lastSeenAt: try row.optionalDate("t2"), keyThumbprint: try row.optionalString("c")))
            case "e":
                email = (try row.string("a"), try row.optionalDate("t1") != nil)
            default:
                identities.append(
                    IdentityRecord(
                        provider: try row.string("a"), subject: try row.string("b"), userID: id, createdAt: try row.date("t1"),
                        email: try row.optionalString("c")))
            }
        }
        // Sorted here, not by ORDER BY: a sort next to bound parameters makes SQLite prepare the statement again on
        // every call.
        profile?.devices = devices.sorted(by: Self.oldestFirst)
        profile?.identities = identities.sorted(by: Self.oldestFirst)
        profile?.email = email?.address
        profile?.emailVerified = email?.verified ?? false
        return profile
    }

    static func devices(ofUser userID: String, on sql: any SQLDatabase) async throws -> [DeviceRecord] {
        try await sql.raw(
            "SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE user_id = \(bind: userID)"
        ).all().map(Self.device(from:)).sorted(by: Self.oldestFirst)
    }

    static func identities(ofUser userID: String, on sql: any SQLDatabase) async throws -> [IdentityRecord] {
        try await sql.raw(
            "SELECT provider, subject, user_id, created_at, email FROM identities WHERE user_id = \(bind: userID)"
        ).all().map { row in
            IdentityRecord(
                provider: try row.string("provider"), subject: try row.string("subject"), userID: try row.string("user_id"),
                createdAt: try row.date("created_at"), email: try row.optionalString("email"))
        }.sorted(by: Self.oldestFirst)
    }

    package func users(limit: Int, offset: Int) async throws -> [UserRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT id, kind, created_at FROM users ORDER BY created_at, id LIMIT \(bind: limit) OFFSET \(bind: offset)")
                .all().map(Self.user(from:))
        }
    }

    package func deleteUser(id: String, at time: Date) async throws -> DeletedUser? {
        defer { self.changes.publish([.userChanged(id)]) }
        return try await self.changing { sql, changes in
            let sessions = try await sql.raw("SELECT id FROM sessions WHERE user_id = \(bind: id)").all().map { try $0.string("id") }
            let live = try await sql.raw("SELECT id, device_id FROM sessions WHERE user_id = \(bind: id) AND revoked_at IS NULL ORDER BY id").all()
            let codes = try await sql.raw("SELECT id FROM access_codes WHERE user_id = \(bind: id)").all().map { try $0.string("id") }
            // ON DELETE CASCADE removes devices, identities, sessions, refresh tokens and access codes.
            let deleted = try await sql.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").first() != nil
            guard deleted else { return nil }
            try await sql.raw(
                "INSERT INTO deleted_users (id, deleted_at) VALUES (\(bind: id), \(bind: time.stored)) ON CONFLICT (id) DO NOTHING"
            ).run()
            for session in live {
                try await Self.emitRevoked(
                    try session.string("id"), userID: id, deviceID: try session.optionalString("device_id"), reason: "deleted", at: time, on: sql)
            }
            try await Self.emit(.userDeleted, userID: id, at: time, on: sql)
            try await Self.recordRevocation(scope: .user, values: [id], at: time, on: sql, noting: changes)
            return DeletedUser(userID: id, sessionIDs: sessions, accessCodeIDs: codes)
        }
    }

    /// Devices oldest first, ties by ID.
    static func oldestFirst(_ left: DeviceRecord, _ right: DeviceRecord) -> Bool {
        (left.createdAt, left.id) < (right.createdAt, right.id)
    }

    /// Identities oldest first, ties by provider and subject.
    static func oldestFirst(_ left: IdentityRecord, _ right: IdentityRecord) -> Bool {
        (left.createdAt, left.provider, left.subject) < (right.createdAt, right.provider, right.subject)
    }

    static func user(from row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: try row.string("id"), kind: UserKind(rawValue: try row.string("kind")), createdAt: try row.date("created_at"))
    }
}
