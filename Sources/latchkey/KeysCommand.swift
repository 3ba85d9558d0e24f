import ArgumentParser
import LatchkeyServer

@available(LatchkeyServer 1.0, *)
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Rotate and list signing keys; make a master key.", subcommands: [Rotate.self, List.self, NewMasterKey.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a signing key that signs from now on. Older keys keep verifying and stay in the JWKS.")

        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            let record = try await withServices(self.options) { services in try await services.keyRing.rotate() }
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
                let status = record.retiredAt.map { "retired \($0.iso8601)" } ?? "active"
                print([record.kid, record.algorithm, record.createdAt.iso8601, status].joined(separator: "\t"))
            }
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
