import ArgumentParser
import Foundation
import LatchkeyServer

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Rotate, list and revoke signing keys; make a master key.",
        subcommands: [Rotate.self, List.self, Revoke.self, NewMasterKey.self, RotateMaster.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a new signing key now; it signs after keys.publish-ahead (default 360 s). Older keys keep verifying.",
            discussion: """
                The new key is in the JWKS at once and signs only after keys.publish-ahead, so a backend holding a cached \
                JWKS (max-age 300) never meets a kid it has not seen. --now signs with it at once (a leaked key: then \
                revoke the old one with `keys revoke`); backends with a cached JWKS refuse the new tokens until their copy \
                expires, up to 5 minutes.
                """)

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Sign with the new key at once instead of after keys.publish-ahead.")
        var now = false

        func run() async throws {
            let record = try await withAudit(
                self.options, AuditAction.keyRotate, { ("key \($0.kid)", "signs from \($0.activeFrom.iso8601)") }
            ) { services in
                try await services.keyRing.rotate(publishAhead: self.now ? 0 : nil)
            }
            print(record.kid)
            FileHandle.standardError.write(Data("latchkey: key \(record.kid) is published now and signs from \(record.activeFrom.iso8601)\n".utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List signing keys (public information only).")

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (records, now) = try await withServices(self.options) { services in (try await services.keyRing.records(), services.clock.now()) }
            let rows = records.reversed().map { record in
                [record.kid, record.algorithm, record.createdAt.iso8601, record.status(at: now)]
            }
            try printRows(["KID", "ALGORITHM", "CREATED", "STATUS"], rows, json: self.json)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a signing key at once (it leaked): tokens it signed stop working everywhere, and it leaves the JWKS.",
            discussion: """
                Revoking the signing key makes a key published ahead (a rotation waiting for its time), or else a fresh \
                one, sign at once. Running servers refuse the key's tokens within \
                revocations.poll-interval (at once on PostgreSQL); other backends that verify from the JWKS stop once their \
                cached copy expires (the JWKS is served with max-age=300).
                """)

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The key's kid, as `keys list` shows.")
        var kid: String

        @OptionGroup var confirmation: Confirmation

        func run() async throws {
            try self.confirmation.confirm("revoke signing key \(self.kid) (every token it signed stops working)")
            let revoked = try await withServices(self.options) { services in
                let revoked = try await services.revokeSigningKey(kid: self.kid)
                if revoked { try await services.audit.record(.commandLine(), AuditAction.keyRevoke, target: "key \(self.kid)") }
                return revoked
            }
            guard revoked else {
                printError("no signing key with kid \(self.kid)")
                throw LatchkeyExit.notFound
            }
            print("revoked signing key \(self.kid)")
        }
    }

    struct NewMasterKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a fresh master key (base64 of 32 random bytes) for LATCHKEY_MASTER_KEY or a master-key file.",
            discussion: "Every process on one PostgreSQL database needs the same master key: it seals the signing keys in the database.")

        @Option(help: "Write it to this new file (mode 0600) instead of printing it.")
        var output: String?

        func run() throws {
            guard let output = self.output else { return print(LatchkeyServices.newMasterKey()) }
            guard LatchkeyServices.writeNewMasterKey(toFile: output) else {
                printError("cannot create \(output) (it exists, or its folder is missing): a master key file is never overwritten")
                throw LatchkeyExit.failed
            }
        }
    }

    struct RotateMaster: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-master",
            abstract: "Re-seal every sealed secret under a new master key, in one transaction, while the servers run.",
            discussion: """
                The new key is read from --new-key-file, or created there (mode 0600) when the file is missing. Signing \
                keys, Apple refresh tokens and queued mails are re-sealed in one transaction; servers keep opening them with \
                the old key until it commits. When the key in use comes from a file (master-key-file, or the file beside an \
                SQLite database), the new key is then written there, and running servers take it the first time the old key \
                cannot open something, or at their next signing-key reload (keys.reload-interval). When it comes from \
                LATCHKEY_MASTER_KEY, set that to the new key on every process and restart them. Secrets derived from the \
                master key change too: mailed codes not yet used stop working (ask for a new one).
                """)

        @OptionGroup var options: DatabaseOptions

        @Option(help: "The file holding the new master key (created, mode 0600, when missing).")
        var newKeyFile: String

        @OptionGroup var confirmation: Confirmation

        func run() async throws {
            try self.confirmation.confirm("re-seal every secret under the master key in \(self.newKeyFile)")
            do {
                let (resealed, keyFile) = try await withAudit(
                    self.options, AuditAction.masterKeyRotate,
                    { result in
                        (
                            "master key",
                            "\(result.resealed.signingKeys) signing keys, \(result.resealed.appleRefreshTokens) Apple refresh tokens, "
                                + "\(result.resealed.queuedMails) queued mails, \(result.resealed.totpSecrets) TOTP secrets, "
                                + "\(result.resealed.adminTOTPSecrets) admin TOTP secrets re-sealed"
                        )
                    }
                ) { services in try await services.rotateMasterKey(newKeyFile: self.newKeyFile) }
                print(
                    "re-sealed \(resealed.signingKeys) signing keys, \(resealed.appleRefreshTokens) Apple refresh tokens, "
                        + "\(resealed.queuedMails) queued mails, \(resealed.totpSecrets) TOTP secrets, \(resealed.adminTOTPSecrets) admin TOTP secrets "
                        + "under the key in \(self.newKeyFile)")
                if let keyFile {
                    print("\(keyFile) holds the new key: running servers take it at their next signing-key reload")
                } else {
                    print("set LATCHKEY_MASTER_KEY (or master-key) on every process to the key in \(self.newKeyFile) and restart them")
                }
            } catch let error as MasterKeyRotationError {
                printError(error.description)
                throw LatchkeyExit.failed
            }
        }
    }
}
