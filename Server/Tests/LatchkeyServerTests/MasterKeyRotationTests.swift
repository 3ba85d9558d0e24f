import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import Testing

/// Issue 29: `latchkey keys rotate-master --new-key-file F` re-seals every sealed secret under a new master key in one
/// transaction while the server runs, and the running server takes the new key without a restart.
@Suite struct MasterKeyRotationTests {
    static func cli(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) async throws -> CLIRun {
        try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: arguments, environment: LatchkeyCLI.environment(environment), workingDirectory: directory)
    }

    @Test func theServerKeepsServingAcrossAMasterKeyRotationAndTakesTheNewKey() async throws {
        let directory = try BackupTests.directory("rotate-master")
        let database = directory.appendingPathComponent("latchkey.sqlite").path
        let keyFile = database + ".key"
        let server = try await LatchkeyProcess.start(database: database, masterKey: nil, environment: ["LATCHKEY_KEYS_RELOAD_INTERVAL": "1"])
        defer { kill(server.pid, SIGKILL) }
        let before = try await server.registerDevice()
        let oldKey = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

        let newKeyFile = directory.appendingPathComponent("new-master.key").path
        let refused = try await Self.cli(["keys", "rotate-master", "--new-key-file", newKeyFile, "--database", database], in: directory)
        #expect(refused.exitCode == 1, "without a terminal it needs --yes: \(refused)")
        let run = try await Self.cli(["keys", "rotate-master", "--new-key-file", newKeyFile, "--yes", "--database", database], in: directory)
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.contains("re-sealed 1 signing keys, 0 Apple refresh tokens, 0 queued mails"), "\(run)")
        let newKey = try String(contentsOfFile: newKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newKey != oldKey)
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == newKey)
        #expect(BackupTests.mode(keyFile) == 0o600 && BackupTests.mode(newKeyFile) == 0o600)

        // The old key opens nothing now.
        let old = try await Self.cli(["users", "list", "--database", database], in: directory, environment: ["LATCHKEY_MASTER_KEY": oldKey])
        #expect(old.exitCode != 0 && old.stderr.contains("master key cannot open signing key"), "\(old)")

        // The running server goes on: tokens from before, a refresh, a new device…
        #expect(try await server.send("GET", "api/v1/auth/me", bearer: before.accessToken).status == 200)
        let refreshed = try await server.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(before.refreshToken)"}"#)
        #expect(refreshed.status == 200)
        // …and opens a signing key sealed under the new master key (by the CLI, which reads the key file) at its reload.
        let rotate = try await Self.cli(["keys", "rotate", "--now", "--database", database], in: directory)
        #expect(rotate.exitCode == 0, "\(rotate)")
        let kid = rotate.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var signed = false
        for _ in 0..<100 where !signed {  // another process's reload: bounded poll, about 10 s
            signed = try Forge.header(of: try await server.registerDevice().accessToken).kid == kid
            if !signed { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(signed, "the running server signs with a key sealed under the new master key")
        let log = server.log
        #expect(!log.contains(oldKey) && !log.contains(newKey))
        #expect(await server.terminate() == 0)

        // A restart reads the new key from the file and opens everything.
        let again = try await LatchkeyProcess.start(database: database, masterKey: nil)
        defer { kill(again.pid, SIGKILL) }
        #expect(try await again.send("GET", "api/v1/auth/me", bearer: before.accessToken).status == 200)
        #expect(await again.terminate() == 0)

        // Run again with the key in use as the "new" key: refused, nothing changed.
        let same = try await Self.cli(["keys", "rotate-master", "--new-key-file", keyFile, "--yes", "--database", database], in: directory)
        #expect(same.exitCode == 1 && same.stderr.contains("holds the master key in use"), "\(same)")
    }
}
