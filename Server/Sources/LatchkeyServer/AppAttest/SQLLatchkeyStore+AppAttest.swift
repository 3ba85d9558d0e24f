import Foundation
import LatchkeyAppAttest
import SQLKit

extension SQLLatchkeyStore: AppAttestStore {
    package func storeChallenge(idHash: String, expiresAt: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw("INSERT INTO app_attest_challenges (id, expires_at) VALUES (\(bind: idHash), \(bind: expiresAt.stored))").run()
        }
    }

    package func takeChallenge(idHash: String) async throws -> Date? {
        // One DELETE … RETURNING: of two concurrent takers exactly one gets the row, on SQLite and on PostgreSQL alike.
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM app_attest_challenges WHERE id = \(bind: idHash) RETURNING expires_at").first()?.date("expires_at")
        }
    }

    package func attestedKey(deviceID: String) async throws -> AppAttestKeyRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT device_id, key_id, public_key, counter, receipt, app_id, method, debug_token_id, attested_at, user_id
                FROM app_attest_keys WHERE device_id = \(bind: deviceID)
                """
            ).first().map { row in
                AppAttestKeyRecord(
                    deviceID: try row.string("device_id"), keyID: try row.string("key_id"),
                    publicKey: try row.optionalString("public_key").flatMap(AppAttestBase64.decode),
                    counter: UInt32(clamping: try row.decode(column: "counter", as: Int64.self)),
                    receipt: try row.optionalString("receipt").flatMap(AppAttestBase64.decode), appID: try row.optionalString("app_id"),
                    method: AppAttestMethod(rawValue: try row.string("method")) ?? .attestation,
                    debugTokenID: try row.optionalString("debug_token_id"),
                    attestedAt: try row.date("attested_at"), userID: try row.optionalString("user_id"))
            }
        }
    }

    package func deviceID(attestedWith keyID: String) async throws -> String? {
        try await self.database.read { sql in
            try await sql.raw("SELECT device_id FROM app_attest_keys WHERE key_id = \(bind: keyID)").first()?.string("device_id")
        }
    }

    package func storeAttestedKey(_ key: AppAttestKeyRecord) async throws {
        try await self.database.transaction { sql in try await Self.storeAttestedKey(key, on: sql) }
    }

    /// Stores `key` inside the caller's transaction (a sign-in's), replacing the device's earlier key;
    /// ``AppAttestKeyInUse`` when its key ID is another device's, or when the device is attested with another key that
    /// this registration's user did not prove (a device UUID is not a secret: nobody re-binds another's attested device).
    static func storeAttestedKey(_ key: AppAttestKeyRecord, on sql: any SQLDatabase) async throws {
        if let owner = try await sql.raw("SELECT device_id FROM app_attest_keys WHERE key_id = \(bind: key.keyID)").first()?.string("device_id"),
            owner != key.deviceID
        {
            throw AppAttestKeyInUse()
        }
        if let current = try await sql.raw("SELECT key_id, user_id FROM app_attest_keys WHERE device_id = \(bind: key.deviceID)").first() {
            let currentUser = try current.optionalString("user_id")
            guard try current.string("key_id") == key.keyID || (currentUser != nil && currentUser == key.userID) else {
                throw AppAttestKeyInUse()
            }
        }
        try await sql.raw("DELETE FROM app_attest_keys WHERE device_id = \(bind: key.deviceID)").run()
        do {
            try await sql.raw(
                """
                INSERT INTO app_attest_keys (
                    device_id, key_id, public_key, counter, receipt, app_id, method, debug_token_id, attested_at, user_id)
                VALUES (\(bind: key.deviceID), \(bind: key.keyID), \(bind: key.publicKey.map(AppAttestBase64.encode)), \(bind: Int64(key.counter)),
                        \(bind: key.receipt.map(AppAttestBase64.encode)), \(bind: key.appID), \(bind: key.method.rawValue),
                        \(bind: key.debugTokenID), \(bind: key.attestedAt.stored), \(bind: key.userID))
                """
            ).run()
        } catch StoreError.conflict {
            // Another device stored this key ID meanwhile (its unique index).
            throw AppAttestKeyInUse()
        }
    }

    package func advanceCounter(deviceID: String, to counter: UInt32) async throws -> Bool {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE app_attest_keys SET counter = \(bind: Int64(counter))
                WHERE device_id = \(bind: deviceID) AND counter < \(bind: Int64(counter)) RETURNING device_id
                """
            ).first() != nil
        }
    }

    package func attestedDevices(among deviceIDs: [String], userID: String) async throws -> Set<String> {
        guard !deviceIDs.isEmpty else { return [] }
        return try await self.database.read { sql in
            var found: Set<String> = []
            for id in deviceIDs {
                if try await sql.raw("SELECT 1 AS one FROM app_attest_keys WHERE device_id = \(bind: id) AND user_id = \(bind: userID)").first()
                    != nil
                {
                    found.insert(id)
                }
            }
            return found
        }
    }

    package func createDebugToken(id: String, name: String, tokenHash: String, at time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO app_attest_debug_tokens (id, name, token_hash, created_at)
                VALUES (\(bind: id), \(bind: name), \(bind: tokenHash), \(bind: time.stored))
                """
            ).run()
        }
    }

    package func debugTokens() async throws -> [AppAttestDebugTokenRecord] {
        try await self.database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.debugTokenColumns) FROM app_attest_debug_tokens ORDER BY created_at, id").all()
                .map(Self.debugToken(from:))
        }
    }

    package func useDebugToken(hash tokenHash: String, at time: Date) async throws -> AppAttestDebugTokenRecord? {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE app_attest_debug_tokens SET last_used_at = \(bind: time.stored)
                WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL RETURNING \(unsafeRaw: Self.debugTokenColumns)
                """
            ).first().map(Self.debugToken(from:))
        }
    }

    package func revokeDebugToken(id: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            guard
                try await sql.raw(
                    "UPDATE app_attest_debug_tokens SET revoked_at = \(bind: time.stored) WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id"
                ).first() != nil
            else { return false }
            // The devices it attested are attested no more.
            try await sql.raw("DELETE FROM app_attest_keys WHERE debug_token_id = \(bind: id)").run()
            return true
        }
    }

    private static let debugTokenColumns = "id, name, created_at, revoked_at, last_used_at"

    private static func debugToken(from row: any SQLRow) throws -> AppAttestDebugTokenRecord {
        AppAttestDebugTokenRecord(
            id: try row.string("id"), name: try row.string("name"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"), lastUsedAt: try row.optionalDate("last_used_at"))
    }
}
