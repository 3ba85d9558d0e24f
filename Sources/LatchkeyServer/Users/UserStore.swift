import Foundation
import LatchkeyAPI
import SQLKit

/// Users and what hangs off them.
@available(LatchkeyServer 1.0, *)
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
    /// The user with their devices and identities, read at once.
    func profile(ofUser id: String) async throws -> (user: UserRecord, devices: [DeviceRecord], identities: [IdentityRecord])?
    /// Deletes the user with its devices, identities, sessions, refresh tokens and access codes, and retires its ID.
    func deleteUser(id: String, at time: Date) async throws -> DeletedUser?
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: UserStore {
    package func registerUser(id: String, kind: UserKind, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO users (id, kind, created_at)
                SELECT \(bind: id), \(bind: kind.rawValue), \(bind: time.stored)
                WHERE NOT EXISTS (SELECT 1 FROM deleted_users WHERE id = \(bind: id))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """
            ).first() != nil
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

    package func profile(ofUser id: String) async throws -> (user: UserRecord, devices: [DeviceRecord], identities: [IdentityRecord])? {
        try await self.database.read { sql in
            guard let user = try await sql.raw("SELECT id, kind, created_at FROM users WHERE id = \(bind: id)").first().map(Self.user(from:))
            else { return nil }
            return (user, try await Self.devices(ofUser: id, on: sql), try await Self.identities(ofUser: id, on: sql))
        }
    }

    static func devices(ofUser userID: String, on sql: any SQLDatabase) async throws -> [DeviceRecord] {
        try await sql.raw(
            "SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE user_id = \(bind: userID)"
        ).all().map(Self.device(from:)).sorted { $0.createdAt < $1.createdAt }
    }

    static func identities(ofUser userID: String, on sql: any SQLDatabase) async throws -> [IdentityRecord] {
        try await sql.raw(
            "SELECT provider, subject, user_id, created_at FROM identities WHERE user_id = \(bind: userID)"
        ).all().map { row in
            IdentityRecord(
                provider: try row.string("provider"), subject: try row.string("subject"), userID: try row.string("user_id"),
                createdAt: try row.date("created_at"))
        }.sorted { $0.createdAt < $1.createdAt }
    }

    package func users(limit: Int, offset: Int) async throws -> [UserRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT id, kind, created_at FROM users ORDER BY created_at, id LIMIT \(bind: limit) OFFSET \(bind: offset)")
                .all().map(Self.user(from:))
        }
    }

    package func deleteUser(id: String, at time: Date) async throws -> DeletedUser? {
        try await self.database.transaction { sql in
            let sessions = try await sql.raw("SELECT id FROM sessions WHERE user_id = \(bind: id)").all().map { try $0.string("id") }
            let codes = try await sql.raw("SELECT id FROM access_codes WHERE user_id = \(bind: id)").all().map { try $0.string("id") }
            // ON DELETE CASCADE removes devices, identities, sessions, refresh tokens and access codes.
            let deleted = try await sql.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").first() != nil
            guard deleted else { return nil }
            try await sql.raw(
                "INSERT INTO deleted_users (id, deleted_at) VALUES (\(bind: id), \(bind: time.stored)) ON CONFLICT (id) DO NOTHING"
            ).run()
            try await Self.recordRevocation(scope: .user, values: [id], at: time, on: sql)
            return DeletedUser(userID: id, sessionIDs: sessions, accessCodeIDs: codes)
        }
    }

    static func user(from row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: try row.string("id"), kind: UserKind(rawValue: try row.string("kind")) ?? .device, createdAt: try row.date("created_at"))
    }
}
