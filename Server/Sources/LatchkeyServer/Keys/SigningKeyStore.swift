import Foundation
import SQLKit

/// Signing keys and server-wide settings shared by every process on the database.
package protocol SigningKeyStore: Sendable {
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Adds `key`, published at once, and retires every other key at `key.activeFrom`, so `key` signs from then on.
    func activateSigningKey(_ key: SigningKeyRecord) async throws
    /// Adds `key` as the active key only when there is none; false when another process got there first
    /// (several processes starting at once on an empty database make one key, not one each).
    func activateFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool
    /// Revokes the key `kid` and announces it in the revocation feed; when it was the active key, `replacement` becomes
    /// the active one in the same transaction. False when there is no such key.
    func revokeSigningKey(kid: String, replacement: SigningKeyRecord, at time: Date) async throws -> Bool
    func setting(_ name: String) async throws -> String?
    func setSetting(_ name: String, to value: String) async throws
}

extension SQLLatchkeyStore: SigningKeyStore {
    package func signingKeys() async throws -> [SigningKeyRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM signing_keys ORDER BY created_at, kid").all().map { row in
                SigningKeyRecord(
                    kid: try row.string("kid"), algorithm: try row.string("algorithm"), publicKeyPEM: try row.string("public_key"),
                    sealedPrivateKey: try row.string("sealed_private_key"), createdAt: try row.date("created_at"),
                    retiredAt: try row.optionalDate("retired_at"), revokedAt: try row.optionalDate("revoked_at"),
                    signsFrom: try row.optionalDate("signs_from"))
            }
        }
    }

    package func activateSigningKey(_ key: SigningKeyRecord) async throws {
        try await self.database.transaction { sql in
            // Rotations take turns, so two at once still leave exactly one active key.
            try await Self.serialize(on: "signing keys", sql)
            let from = key.activeFrom.stored
            try await sql.raw("UPDATE signing_keys SET retired_at = \(bind: from) WHERE retired_at IS NULL OR retired_at > \(bind: from)").run()
            try await Self.insert(key, on: sql)
        }
    }

    package func activateFirstSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "signing keys", sql)
            guard try await sql.raw("SELECT kid FROM signing_keys WHERE retired_at IS NULL").first() == nil else { return false }
            try await Self.insert(key, on: sql)
            return true
        }
    }

    package func revokeSigningKey(kid: String, replacement: SigningKeyRecord, at time: Date) async throws -> Bool {
        try await self.changing { sql, changes in
            try await Self.serialize(on: "signing keys", sql)
            guard
                let row = try await sql.raw(
                    """
                    UPDATE signing_keys SET revoked_at = COALESCE(revoked_at, \(bind: time.stored)),
                        retired_at = CASE WHEN retired_at IS NULL OR retired_at > \(bind: time.stored) THEN \(bind: time.stored) ELSE retired_at END
                    WHERE kid = \(bind: kid) RETURNING kid
                    """
                ).first(), try row.string("kid") == kid
            else { return false }
            let signing = try await sql.raw(
                """
                SELECT kid FROM signing_keys WHERE revoked_at IS NULL AND COALESCE(signs_from, created_at) <= \(bind: time.stored)
                    AND (retired_at IS NULL OR retired_at > \(bind: time.stored))
                """
            ).first()
            if signing == nil {
                // The signing key went: a key published ahead (a rotation waiting for its time) signs from now on, else a
                // fresh one.
                let pending = try await sql.raw(
                    """
                    UPDATE signing_keys SET signs_from = \(bind: time.stored)
                    WHERE revoked_at IS NULL AND retired_at IS NULL AND signs_from > \(bind: time.stored) RETURNING kid
                    """
                ).first()
                if pending == nil { try await Self.insert(replacement, on: sql) }
            }
            try await Self.recordRevocation(scope: .key, values: [kid], at: time, on: sql, noting: changes)
            return true
        }
    }

    static func insert(_ key: SigningKeyRecord, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO signing_keys (kid, algorithm, public_key, sealed_private_key, created_at, signs_from)
            VALUES (\(bind: key.kid), \(bind: key.algorithm), \(bind: key.publicKeyPEM), \(bind: key.sealedPrivateKey),
                    \(bind: key.createdAt.stored), \(bind: key.signsFrom?.stored))
            """
        ).run()
    }

    package func setting(_ name: String) async throws -> String? {
        try await self.database.read { sql in
            try await sql.raw("SELECT value FROM settings WHERE name = \(bind: name)").first()?.string("value")
        }
    }

    package func setSetting(_ name: String, to value: String) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                "INSERT INTO settings (name, value) VALUES (\(bind: name), \(bind: value)) ON CONFLICT (name) DO UPDATE SET value = \(bind: value)"
            ).run()
        }
    }
}
