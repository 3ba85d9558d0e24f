import ArgumentParser
import Foundation
import LatchkeyServer

struct AppAttestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-attest", abstract: "App Attest: debug tokens for simulators and CI.", subcommands: [DebugToken.self])

    struct DebugToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "debug-token",
            abstract: "Debug tokens stand in for an attestation where app-attest.allow-debug-tokens is true; every use is audited.",
            subcommands: [Create.self, List.self, Revoke.self])
    }
}

extension AppAttestCommand.DebugToken {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mint a debug token and print it once (the app sends it as app_attest.debug_token).")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "What the token is for (a simulator, a CI job).")
        var name: String

        func run() async throws {
            let (id, token) = try await withAudit(self.options, AuditAction.appAttestDebugTokenCreate, { ("debug token \($0.id)", self.name) }) {
                services in try await services.appAttest.createDebugToken(name: self.name)
            }
            print(token)
            FileHandle.standardError.write(Data("debug token \(id): above (shown once)\n".utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List debug tokens (never their secrets).")

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let tokens = try await withServices(self.options) { services in try await services.appAttest.debugTokens() }
            try printRows(
                ["ID", "NAME", "CREATED", "LAST_USED", "REVOKED"],
                tokens.map { [$0.id, $0.name, $0.createdAt.iso8601, $0.lastUsedAt?.iso8601 ?? "-", $0.revokedAt?.iso8601 ?? "-"] }, json: self.json)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a debug token: it attests nothing from now on, and the devices it attested are no longer attested.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The debug token's ID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            try await withAudit(self.options, AuditAction.appAttestDebugTokenRevoke, { _ in ("debug token \(id)", nil) }) { services in
                try await services.appAttest.revokeDebugToken(id: id)
            }
            FileHandle.standardError.write(Data("debug token \(id) revoked\n".utf8))
        }
    }
}
