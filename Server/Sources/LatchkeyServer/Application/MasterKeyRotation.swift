import Foundation
import SQLKit

/// What `latchkey keys rotate-master` re-sealed.
package struct ResealedSecrets: Sendable, Equatable {
    package var signingKeys = 0
    package var appleRefreshTokens = 0
    package var queuedMails = 0
    package var totpSecrets = 0
    package var adminTOTPSecrets = 0
}

/// Why the master key was not rotated; nothing changed.
package struct MasterKeyRotationError: Error, CustomStringConvertible {
    package let description: String
}

extension SQLLatchkeyStore {
    /// Replaces every sealed secret — signing keys, Apple refresh tokens, queued mails, TOTP secrets of users and admins — with `reseal(sealed, context)`,
    /// in one transaction: all or nothing.
    func resealSecrets(_ reseal: @escaping @Sendable (String, String) throws -> String) async throws -> ResealedSecrets {
        try await self.database.patientTransaction { sql in
            var count = ResealedSecrets()
            // Rotations of signing keys wait for this one (and this for them), so no key is sealed under the old key after.
            try await Self.serialize(on: "signing keys", sql)
            for row in try await sql.raw("SELECT kid, sealed_private_key FROM signing_keys").all() {
                let kid = try row.string("kid")
                let sealed = try reseal(try row.string("sealed_private_key"), SigningKeyRing.sealContext(kid: kid))
                try await sql.raw("UPDATE signing_keys SET sealed_private_key = \(bind: sealed) WHERE kid = \(bind: kid)").run()
                count.signingKeys += 1
            }
            let identities = try await sql.raw(
                "SELECT provider, subject, sealed_refresh_token FROM identities WHERE sealed_refresh_token IS NOT NULL"
            ).all()
            for row in identities {
                let (provider, subject) = (try row.string("provider"), try row.string("subject"))
                let sealed = try reseal(try row.string("sealed_refresh_token"), FederationService.sealContext(subject: subject))
                try await sql.raw(
                    "UPDATE identities SET sealed_refresh_token = \(bind: sealed) WHERE provider = \(bind: provider) AND subject = \(bind: subject)"
                ).run()
                count.appleRefreshTokens += 1
            }
            for row in try await sql.raw("SELECT id, message_id, sealed_message FROM outbox WHERE sealed_message IS NOT NULL").all() {
                let id = try row.decode(column: "id", as: Int.self)
                let sealed = try reseal(try row.string("sealed_message"), OutboxSender.sealContext(try row.string("message_id")))
                try await sql.raw("UPDATE outbox SET sealed_message = \(bind: sealed) WHERE id = \(bind: id)").run()
                count.queuedMails += 1
            }
            for row in try await sql.raw("SELECT id, sealed_secret FROM mfa_factors").all() {
                let id = try row.string("id")
                let sealed = try reseal(try row.string("sealed_secret"), SecondFactorService.sealContext(factorID: id))
                try await sql.raw("UPDATE mfa_factors SET sealed_secret = \(bind: sealed) WHERE id = \(bind: id)").run()
                count.totpSecrets += 1
            }
            for row in try await sql.raw("SELECT id, sealed_totp_secret FROM admin_accounts WHERE sealed_totp_secret IS NOT NULL").all() {
                let id = try row.string("id")
                let sealed = try reseal(try row.string("sealed_totp_secret"), AdminService.sealContext(adminID: id))
                try await sql.raw("UPDATE admin_accounts SET sealed_totp_secret = \(bind: sealed) WHERE id = \(bind: id)").run()
                count.adminTOTPSecrets += 1
            }
            return count
        }
    }
}

extension LatchkeyServices {
    /// Re-seals every sealed secret under the key in `newKeyFile` (read, or created there with a fresh key, mode 0600) in
    /// one transaction while servers run — they open with the old key until it commits — then, when the master key in
    /// use comes from a file, writes the new key there (a new file renamed over it), where running servers find it the
    /// first time the old key cannot open something, or at their next signing-key reload. A value already sealed under
    /// the new key (a rotation run again) is kept; one that opens with neither key stops the rotation, nothing changed.
    ///
    /// - Returns: what was re-sealed, and the key file now holding the new key (nil: the key came from `master-key`,
    ///   which the operator changes on every process).
    package func rotateMasterKey(newKeyFile: String) async throws -> (resealed: ResealedSecrets, keyFile: String?) {
        let old = try Self.masterKey(self.configuration)
        let newKey = try MasterKey.loadOrCreate(filePath: newKeyFile)
        guard !old.isSame(as: newKey) else {
            throw MasterKeyRotationError(description: "\(newKeyFile) holds the master key in use: give a new file (it is created with a fresh key)")
        }
        let resealed = try await self.store.resealSecrets { sealed, context in
            if let plain = try? old.open(sealed, context: context) { return try newKey.seal(plain, context: context) }
            if (try? newKey.open(sealed, context: context)) != nil { return sealed }
            throw MasterKeyRotationError(
                description:
                    "a secret (\(context.split(separator: " ").first ?? "")) opens with neither key: is the master key in use this database's?")
        }
        guard self.configuration.masterKey == nil else { return (resealed, nil) }
        let keyFile = self.configuration.masterKeyFile ?? MasterKey.defaultFilePath(forDatabase: self.configuration.database)
        guard URL(fileURLWithPath: keyFile).standardized != URL(fileURLWithPath: newKeyFile).standardized else { return (resealed, keyFile) }
        let staged = keyFile + ".rotating"
        try? FileManager.default.removeItem(atPath: staged)
        guard writeExclusively(staged, newKey.base64 + "\n", mode: 0o600), rename(staged, keyFile) == 0 else {
            throw MasterKeyRotationError(
                description:
                    "every secret is sealed under the key in \(newKeyFile) now, but \(keyFile) could not be replaced (\(lastSystemError())): "
                    + "copy \(newKeyFile) over it before the servers restart")
        }
        return (resealed, keyFile)
    }
}
