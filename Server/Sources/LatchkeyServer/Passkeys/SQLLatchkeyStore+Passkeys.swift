import Foundation
import LatchkeyAPI
import SQLKit

/// Thrown inside a transaction to roll back what it wrote, with what to answer instead.
private struct SignInRefused: Error {
    let outcome: PasskeySignIn
}

extension SQLLatchkeyStore: PasskeyStore {
    package func storeChallenge(_ challenge: PasskeyChallengeRecord) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO passkey_challenges (id_hash, ceremony, challenge, user_id, session_id, created_at, expires_at)
                VALUES (\(bind: challenge.idHash), \(bind: challenge.ceremony.rawValue), \(bind: Base64URL.encode(challenge.challenge)),
                        \(bind: challenge.userID), \(bind: challenge.sessionID), \(bind: challenge.createdAt.stored),
                        \(bind: challenge.expiresAt.stored))
                """
            ).run()
        }
    }

    package func takeChallenge(idHash: String) async throws -> PasskeyChallengeRecord? {
        // One DELETE … RETURNING: of two concurrent takers exactly one gets the row, on SQLite and on PostgreSQL alike.
        try await self.database.transaction { sql in
            guard
                let row = try await sql.raw(
                    """
                    DELETE FROM passkey_challenges WHERE id_hash = \(bind: idHash)
                    RETURNING id_hash, ceremony, challenge, user_id, session_id, created_at, expires_at
                    """
                ).first(),
                let ceremony = PasskeyCeremony(rawValue: try row.string("ceremony")),
                let challenge = Base64URL.decode(try row.string("challenge"))
            else { return nil }
            return PasskeyChallengeRecord(
                idHash: idHash, ceremony: ceremony, challenge: challenge, userID: try row.optionalString("user_id"),
                sessionID: try row.optionalString("session_id"), createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"))
        }
    }

    package func passkeys(ofUser userID: String) async throws -> [PasskeyRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.passkeyColumns) FROM passkeys WHERE user_id = \(bind: userID) ORDER BY created_at, id")
                .all().map(Self.passkey(from:))
        }
    }

    package func passkey(credentialID: [UInt8]) async throws -> PasskeyRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.passkeyColumns) FROM passkeys WHERE credential_id = \(bind: Base64URL.encode(credentialID))"
            ).first().map(Self.passkey(from:))
        }
    }

    package func addPasskey(_ passkey: PasskeyRecord) async throws -> PasskeyAddition {
        do {
            return try await self.database.transaction { sql in
                let credentialID = Base64URL.encode(passkey.credentialID)
                if try await sql.raw("SELECT id FROM passkeys WHERE credential_id = \(bind: credentialID)").first() != nil {
                    return .credentialExists
                }
                guard try await sql.raw("SELECT id FROM users WHERE id = \(bind: passkey.userID)").first() != nil else { return .userGone }
                try await sql.raw(
                    """
                    INSERT INTO passkeys (id, user_id, credential_id, public_key, algorithm, sign_count, backup_eligible, backed_up, aaguid,
                        attestation_format, transports, name, created_at)
                    VALUES (\(bind: passkey.id), \(bind: passkey.userID), \(bind: credentialID), \(bind: Base64URL.encode(passkey.publicKey)),
                            \(bind: passkey.algorithm), \(bind: Int64(passkey.signCount)), \(bind: passkey.backupEligible ? 1 : 0),
                            \(bind: passkey.backedUp ? 1 : 0), \(bind: Base64URL.encode(passkey.aaguid)), \(bind: passkey.attestationFormat),
                            \(bind: passkey.transports.joined(separator: " ")), \(bind: passkey.name), \(bind: passkey.createdAt.stored))
                    """
                ).run()
                try await Self.emit(.passkeyAdded, userID: passkey.userID, ["passkey_id": passkey.id], at: passkey.createdAt, on: sql)
                return .added
            }
        } catch StoreError.conflict {
            // The credential ID's unique index, when two registrations of one credential race.
            return .credentialExists
        }
    }

    package func renamePasskey(id: String, userID: String, name: String) async throws -> PasskeyRecord? {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE passkeys SET name = \(bind: name) WHERE id = \(bind: id) AND user_id = \(bind: userID)
                RETURNING \(unsafeRaw: Self.passkeyColumns)
                """
            ).first().map(Self.passkey(from:))
        }
    }

    package func deletePasskey(id: String, userID: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            let deleted = try await sql.raw("DELETE FROM passkeys WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id").first() != nil
            if deleted { try await Self.emit(.passkeyRemoved, userID: userID, ["passkey_id": id], at: time, on: sql) }
            return deleted
        }
    }

    package func signIn(with use: PasskeyUse, session: NewSession, joining device: DeviceRecord?) async throws -> PasskeySignIn {
        do {
            return try await self.changing { sql, changes in
                var newDevice = false
                if let device {
                    if let refused = try await Self.refusal(joining: device, on: sql) { return refused }
                    newDevice = try await Self.join(device, on: sql)
                }
                // Compare-and-set: of two sign-ins that checked their assertions against one stored counter, one moves it.
                let spent = try await sql.raw(
                    """
                    UPDATE passkeys SET sign_count = \(bind: Int64(use.signCount)), backed_up = \(bind: use.backedUp ? 1 : 0),
                        last_used_at = \(bind: use.at.stored)
                    WHERE id = \(bind: use.passkeyID) AND user_id = \(bind: session.userID) AND sign_count = \(bind: Int64(use.storedSignCount))
                    RETURNING id
                    """
                ).first()
                if spent == nil {
                    let exists = try await sql.raw("SELECT id FROM passkeys WHERE id = \(bind: use.passkeyID)").first() != nil
                    throw SignInRefused(outcome: exists ? .counterChanged : .passkeyGone)
                }
                let start = try await Self.insert(session, on: sql)
                changes.note(.userChanged(session.userID))
                return .signedIn(start, newDevice: newDevice)
            }
        } catch let refused as SignInRefused {
            return refused.outcome
        } catch StoreError.conflict {
            // The user was deleted meanwhile (the session's foreign key), or the device ID was claimed meanwhile.
            return device == nil ? .passkeyGone : .deviceClaimed
        }
    }

    /// Why `device` cannot join its user, inside the caller's transaction: another user's device or user ID, or a retired ID.
    private static func refusal(joining device: DeviceRecord, on sql: any SQLDatabase) async throws -> PasskeySignIn? {
        if try await Self.isDeleted(device.id, on: sql) { return .deviceIDRetired }
        if let owner = try await sql.raw("SELECT user_id FROM devices WHERE id = \(bind: device.id)").first() {
            return try owner.string("user_id") == device.userID ? nil : .deviceClaimed
        }
        // A user whose ID is this device ID (`users/register`, or a device user whose device row is gone) owns the ID.
        if device.id != device.userID, try await sql.raw("SELECT id FROM users WHERE id = \(bind: device.id)").first() != nil {
            return .deviceClaimed
        }
        return nil
    }

    /// Adds the device to its user, or marks the user's own device seen; returns whether its row was created.
    private static func join(_ device: DeviceRecord, on sql: any SQLDatabase) async throws -> Bool {
        let created =
            try await sql.raw(
                """
                INSERT INTO devices (id, user_id, secret_hash, created_at, last_seen_at, key_thumbprint)
                VALUES (\(bind: device.id), \(bind: device.userID), \(bind: device.secretHash), \(bind: device.createdAt.stored),
                        \(bind: device.createdAt.stored), \(bind: device.keyThumbprint))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """
            ).first() != nil
        if !created {
            let updated = try await sql.raw(
                """
                UPDATE devices SET last_seen_at = \(bind: device.createdAt.stored)
                WHERE id = \(bind: device.id) AND user_id = \(bind: device.userID) RETURNING id
                """
            ).first()
            // Claimed by another user between the check and the insert.
            if updated == nil { throw SignInRefused(outcome: .deviceClaimed) }
        }
        return created
    }

    static let passkeyColumns =
        "id, user_id, credential_id, public_key, algorithm, sign_count, backup_eligible, backed_up, aaguid, attestation_format, transports, "
        + "name, created_at, last_used_at"

    static func passkey(from row: any SQLRow) throws -> PasskeyRecord {
        PasskeyRecord(
            id: try row.string("id"), userID: try row.string("user_id"), credentialID: Base64URL.decode(try row.string("credential_id")) ?? [],
            publicKey: Base64URL.decode(try row.string("public_key")) ?? [], algorithm: try row.decode(column: "algorithm", as: Int.self),
            signCount: UInt32(clamping: try row.decode(column: "sign_count", as: Int64.self)),
            backupEligible: try row.decode(column: "backup_eligible", as: Int.self) != 0,
            backedUp: try row.decode(column: "backed_up", as: Int.self) != 0, aaguid: Base64URL.decode(try row.string("aaguid")) ?? [],
            attestationFormat: try row.string("attestation_format"),
            transports: (try row.optionalString("transports") ?? "").split(separator: " ").map(String.init), name: try row.string("name"),
            createdAt: try row.date("created_at"), lastUsedAt: try row.optionalDate("last_used_at"))
    }
}
