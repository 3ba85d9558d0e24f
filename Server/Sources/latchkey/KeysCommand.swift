import ArgumentParser
import Foundation
import LatchkeyServer

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Rotate, list and revoke signing keys; make a master key.",
        subcommands: [Rotate.self, List.self, Revoke.self, NewMasterKey.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a signing key that signs from now on. Older keys keep verifying and stay in the JWKS.")

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let record = try await withAudit(self.options, AuditAction.keyRotate, { ("key \($0.kid)", nil) }) { services in
                try await services.keyRing.rotate()
            }
            print(record.kid)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List signing keys (public information only).")

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let records = try await withServices(self.options) { services in try await services.keyRing.records() }
            print(["KID", "ALGORITHM", "CREATED", "STATUS"].joined(separator: "\t"))
            for record in records.reversed() {
                let status = record.revokedAt.map { "revoked \($0.iso8601)" } ?? record.retiredAt.map { "retired \($0.iso8601)" } ?? "active"
                print([record.kid, record.algorithm, record.createdAt.iso8601, status].joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a signing key at once (it leaked): tokens it signed stop working everywhere, and it leaves the JWKS.",
            discussion: """
                Revoking the signing key activates a fresh one first. Running servers refuse the key's tokens within \
                revocations.poll-interval (at once on PostgreSQL); other backends that verify from the JWKS stop once their \
                cached copy expires (the JWKS is served with max-age=300).
                """)

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The key's kid, as `keys list` shows.")
        var kid: String

        func run() async throws {
            let revoked = try await withServices(self.options) { services in
                let revoked = try await services.revokeSigningKey(kid: self.kid)
                if revoked { try await services.audit.record(.commandLine(), AuditAction.keyRevoke, target: "key \(self.kid)") }
                return revoked
            }
            guard revoked else {
                FileHandle.standardError.write(Data("error: no signing key with kid \(self.kid)\n".utf8))
                throw ExitCode.failure
            }
            print("revoked signing key \(self.kid)")
        }
    }

    struct NewMasterKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a fresh master key (base64 of 32 random bytes) for LATCHKEY_MASTER_KEY or a master-key file.",
            discussion: "Every process on one PostgreSQL database needs the same master key: it seals the signing keys in the database.")

        func run() {
            print(LatchkeyServices.newMasterKey())
        }
    }
}
