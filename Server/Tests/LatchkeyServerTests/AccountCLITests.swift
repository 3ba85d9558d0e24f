import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The support commands of email accounts, run as the built `latchkey` executable against the database of a server
/// running in this process: `users show` and `verify-email`, `set-password` (the password on standard input, never an
/// argument), and `outbox list|retry`.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct AccountCLITests {
    static let password = "correct horse battery staple"

    /// Cheap hashes in the CLI too, as on the test server.
    static let cheapHashing = ["LATCHKEY_PASSWORDS_ARGON2_MEMORY": "64", "LATCHKEY_PASSWORDS_ARGON2_ITERATIONS": "1"]

    /// Runs `latchkey <arguments> --database …` with `input` as its standard input.
    static func cli(_ server: TestServer, input: String? = nil, _ arguments: String...) async throws -> CLIRun {
        var stdin: URL?
        if let input {
            let file = server.directory.appendingPathComponent("stdin-\(UUID().uuidString)")
            try Data(input.utf8).write(to: file)
            stdin = file
        }
        defer { if let stdin { try? FileManager.default.removeItem(at: stdin) } }
        return try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: arguments + ["--database", server.databasePath],
            environment: LatchkeyCLI.environment(["LATCHKEY_MASTER_KEY": TestServer.masterKey].merging(Self.cheapHashing) { $1 }),
            workingDirectory: server.directory, standardInput: stdin)
    }

    @Test func verifyEmailLetsAnAccountWhoseMailNeverCameSignIn() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let registered = try await client.register(email, Self.password).decode(EmailAccountResponse.self)
            #expect(try await client.login(email, Self.password).envelope?.error.code == .emailNotVerified)

            let before = try await Self.cli(server, "users", "show", registered.userID)
            #expect(before.exitCode == 0, "\(before)")
            #expect(before.stdout.contains(email), "\(before)")
            #expect(before.stdout.contains("not verified"), "\(before)")

            let verify = try await Self.cli(server, "users", "verify-email", registered.userID)
            #expect(verify.exitCode == 0, "\(verify)")
            #expect(try await client.login(email, Self.password).status == .ok)
            let after = try await Self.cli(server, "users", "show", registered.userID)
            #expect(!after.stdout.contains("not verified"), "\(after)")
        }
    }

    @Test func verifyEmailOfAUserWithoutAnAddressFailsNamingTheUser() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let run = try await Self.cli(server, "users", "verify-email", device.userID)
            #expect(run.exitCode != 0, "\(run)")
            #expect(run.stderr.contains(device.userID), "\(run)")
        }
    }

    /// Support sets a password read from standard input: every session of the user ends, the old password stops
    /// working, the new one signs in, and the password is printed nowhere.
    @Test func setPasswordReadsStandardInputAndEndsEverySession() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            let newPassword = "a brand new passphrase \(UUID().uuidString.prefix(8))"

            let run = try await Self.cli(server, input: newPassword + "\n", "users", "set-password", session.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("revoked 1 session"), "\(run)")
            #expect(!run.stdout.contains(newPassword) && !run.stderr.contains(newPassword))

            #expect(try await client.refresh(session.refreshToken).status == .unauthorized)
            #expect(try await client.login(email, Self.password).status == .unauthorized)
            #expect(try await client.login(email, newPassword).status == .ok)
        }
    }

    @Test(arguments: ["password\n", "short\n", "\n"])
    func setPasswordRefusesAWeakOrMissingPasswordAndChangesNothing(input: String) async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            let run = try await Self.cli(server, input: input, "users", "set-password", session.userID)
            #expect(run.exitCode != 0, "\(run)")
            #expect(!run.stderr.isEmpty)
            #expect(try await client.refresh(session.refreshToken).status == .ok)
            #expect(try await client.login(email, Self.password).status == .ok)
        }
    }

    @Test func setPasswordTakesNoPasswordArgument() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { $0.useMailPeer(peer) }
        let run = try await Self.cli(server, input: "", "users", "set-password", UUID().uuidString, "correct horse battery staple")
        #expect(run.exitCode != 0, "\(run)")
    }

    /// A mail the relay refused for good is listed as failed with the relay's answer (never the mail's content); `retry`
    /// makes it due again with fresh attempts, and `--pending` lists only mails not sent.
    @Test func outboxListShowsAFailedMailAndRetryMakesItDueAgain() async throws {
        let peer = try await SMTPPeer.shared()
        // The server's sender scans only when this test says (or a registration wakes it), not on its own timer.
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.email.pollInterval = 3600
        }
        try await server.test(.live) { client in
            let refused = newAddress("refuse")
            let delivered = newAddress()
            #expect(try await client.register(refused, Self.password).status == .created)
            #expect(try await client.register(delivered, Self.password).status == .created)
            await server.services.outboxSender?.deliverDue()
            let code = try await peer.mail(to: delivered).code

            let list = try await Self.cli(server, "outbox", "list")
            #expect(list.exitCode == 0, "\(list)")
            let failed = try #require(list.tableRows.first { $0[1] == refused }, "\(list)")
            #expect(failed[2] == "verify" && failed[3] == "failed" && failed[4] == "1", "\(failed)")
            #expect(failed[7].contains("550"), "\(failed)")
            #expect(list.tableRows.first { $0[1] == delivered }?[3] == "sent", "\(list)")
            #expect(!list.stdout.contains(code))

            let pending = try await Self.cli(server, "outbox", "list", "--pending")
            #expect(pending.tableRows.map { $0[1] } == [refused], "\(pending)")

            let retry = try await Self.cli(server, "outbox", "retry", "--id", failed[0])
            #expect(retry.exitCode == 0, "\(retry)")
            #expect(retry.stdout.contains("1 mail(s) due now"), "\(retry)")
            let again = try await Self.cli(server, "outbox", "list", "--pending")
            let row = try #require(again.tableRows.first, "\(again)")
            #expect(row[3] == "pending" && row[4] == "0", "\(row)")
            // The running server sends it at its next scan; the relay refuses it again.
            await server.services.outboxSender?.deliverDue()
            let last = try await Self.cli(server, "outbox", "list", "--pending")
            #expect(last.tableRows.first.map { [$0[3], $0[4]] } == ["failed", "1"], "\(last)")
        }
    }
}
