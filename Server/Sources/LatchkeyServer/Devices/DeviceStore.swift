import Foundation
import LatchkeyAPI
import SQLKit

/// What registering a new device did.
package enum DeviceRegistration: Sendable, Equatable {
    /// The device, its user and its first session were created.
    case created
    /// A user or device with this ID exists already; nothing was written.
    case exists
    /// A user with this ID was deleted and its ID is retired; nothing was written.
    case deletedID
}

/// What signing a known device in did.
package enum DeviceSignIn: Sendable, Equatable {
    /// The session was started.
    case signedIn
    /// The session was started and the device's secret, doomed by `logout global`, replaced by the one given.
    case secretRotated
    /// The secret presented is no longer the device's (rotated or reset meanwhile); nothing was written.
    case secretChanged
}

/// Registered devices.
package protocol DeviceStore: Sendable {
    func device(id: String) async throws -> DeviceRecord?
    /// Creates the device's user (whose ID is the device ID), the device and its first session at once.
    func registerNewDevice(_ device: DeviceRecord, session: NewSession) async throws -> DeviceRegistration
    /// Starts `session` for the known device `deviceID`, which is bound from now on to the key of `session`'s proof
    /// when it had none; one transaction. With `secret` (a keyless device that proved itself with the secret whose hash is
    /// `presented`), that secret must still be the device's, and when `logout global` doomed it, `next` replaces it.
    func signInDevice(_ deviceID: String, session: NewSession, secret: (presented: String, next: String)?) async throws -> DeviceSignIn
    /// Support: gives the device a new secret hash, forgets its key and revokes its sessions; returns the revoked
    /// sessions' IDs, or nil when there is no such device.
    func resetDevice(id: String, secretHash: String, at time: Date) async throws -> [String]?
    /// Whether `id` names a device Latchkey knows: one registered with `auth/register-device`, or the device user of
    /// `users/register` (whose ID is the device's). Deleted users' devices are not known.
    func isKnownDevice(id: String) async throws -> Bool
}

extension DeviceStore {
    /// ``signInDevice(_:session:secret:)`` without a secret to check (a device that proved its key).
    func signInDevice(_ deviceID: String, session: NewSession) async throws {
        _ = try await self.signInDevice(deviceID, session: session, secret: nil)
    }
}

extension SQLLatchkeyStore: DeviceStore {
    package func isKnownDevice(id: String) async throws -> Bool {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT 1 AS known WHERE EXISTS (SELECT 1 FROM devices WHERE id = \(bind: id))
                OR EXISTS (SELECT 1 FROM users WHERE id = \(bind: id) AND kind = 'device')
                """
            ).first() != nil
        }
    }

    package func device(id: String) async throws -> DeviceRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.deviceColumns) FROM devices WHERE id = \(bind: id)").first().map(Self.device(from:))
        }
    }

    package func registerNewDevice(_ device: DeviceRecord, session: NewSession) async throws -> DeviceRegistration {
        do {
            return try await self.database.transaction { sql in
                if try await Self.isDeleted(device.userID, on: sql) { return .deletedID }
                try await sql.raw(
                    """
                    INSERT INTO users (id, kind, created_at)
                    VALUES (\(bind: device.userID), \(bind: UserKind.device.rawValue), \(bind: device.createdAt.stored))
                    """
                ).run()
                try await Self.emit(.userCreated, userID: device.userID, ["kind": UserKind.device.rawValue], at: device.createdAt, on: sql)
                try await sql.raw(
                    """
                    INSERT INTO devices (id, user_id, secret_hash, created_at, last_seen_at, key_thumbprint)
                    VALUES (\(bind: device.id), \(bind: device.userID), \(bind: device.secretHash), \(bind: device.createdAt.stored),
                            \(bind: device.createdAt.stored), \(bind: device.keyThumbprint))
                    """
                ).run()
                try await Self.insert(session, on: sql)
                return .created
            }
        } catch StoreError.conflict {
            return .exists
        }
    }

    package func signInDevice(_ deviceID: String, session: NewSession, secret: (presented: String, next: String)?) async throws -> DeviceSignIn {
        defer { self.changes.publish([.userChanged(session.userID)]) }
        return try await self.database.transaction { sql in
            var outcome = DeviceSignIn.signedIn
            if let secret {
                // Conditional, so of two sign-ins with a doomed secret one rotates it and the other finds it changed.
                let rotated = try await sql.raw(
                    """
                    UPDATE devices SET secret_hash = \(bind: secret.next), secret_rotation_due = 0
                    WHERE id = \(bind: deviceID) AND secret_hash = \(bind: secret.presented) AND secret_rotation_due = 1 RETURNING id
                    """
                ).first()
                if rotated != nil {
                    outcome = .secretRotated
                } else if try await sql.raw("SELECT id FROM devices WHERE id = \(bind: deviceID) AND secret_hash = \(bind: secret.presented)").first()
                    == nil
                {
                    return .secretChanged
                }
            }
            if let thumbprint = session.proof?.thumbprint {
                try await sql.raw(
                    "UPDATE devices SET key_thumbprint = \(bind: thumbprint) WHERE id = \(bind: deviceID) AND key_thumbprint IS NULL"
                ).run()
            }
            try await sql.raw("UPDATE devices SET last_seen_at = \(bind: session.createdAt.stored) WHERE id = \(bind: deviceID)").run()
            try await Self.insert(session, on: sql)
            return outcome
        }
    }

    package func resetDevice(id: String, secretHash: String, at time: Date) async throws -> [String]? {
        try await self.changing { sql, changes -> [String]? in
            guard
                let userID = try await sql.raw(
                    "UPDATE devices SET secret_hash = \(bind: secretHash), key_thumbprint = NULL WHERE id = \(bind: id) RETURNING user_id"
                ).first()?.string("user_id")
            else { return nil }
            changes.note(.userChanged(userID))
            return try await Self.revokeSessions(where: "device_id = \(bind: id)", reason: "admin", at: time, on: sql, noting: changes)
        }
    }

    static let deviceColumns = "id, user_id, secret_hash, created_at, last_seen_at, key_thumbprint"

    static func device(from row: any SQLRow) throws -> DeviceRecord {
        DeviceRecord(
            id: try row.string("id"), userID: try row.string("user_id"), secretHash: try row.string("secret_hash"),
            createdAt: try row.date("created_at"), lastSeenAt: try row.optionalDate("last_seen_at"),
            keyThumbprint: try row.optionalString("key_thumbprint"))
    }
}
