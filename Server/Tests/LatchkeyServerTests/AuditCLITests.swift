import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Every support command that changes something writes the audit log (who: the login running the CLI; what; on what;
/// when; from where), and `latchkey audit list` prints it: the built executable against a live server's database.
@Suite(.timeLimit(.minutes(3)))
struct AuditCLITests {
    static let login = "support-ann"

    /// `latchkey <arguments> --database …` run by the login `support-ann`.
    static func cli(_ server: TestServer, _ arguments: String...) async throws -> CLIRun {
        try await LatchkeyCLI.run(
            arguments + ["--database", server.databasePath], masterKey: TestServer.masterKey, workingDirectory: server.directory,
            environment: ["LOGNAME": Self.login, "USER": Self.login])
    }

    @Test func supportCommandsAreRecordedNewestFirstWithWhoWhatAndWhere() async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date().addingTimeInterval(20)))
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let user = device.userID
            let issue = try await Self.cli(server, "access-code", "issue", "--user-id", user, "--note", "ticket 42")
            #expect(issue.exitCode == 0, "\(issue)")
            let code = issue.stdoutLines[0]
            #expect(try await Self.cli(server, "users", "budget", user).exitCode == 0)  // a read: not recorded
            #expect(try await Self.cli(server, "users", "budget", user, "--set", "50").exitCode == 0)
            #expect(try await Self.cli(server, "users", "revoke-sessions", user).exitCode == 0)
            let rotate = try await Self.cli(server, "keys", "rotate")
            #expect(rotate.exitCode == 0, "\(rotate)")
            let kid = rotate.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await Self.cli(server, "users", "delete", user, "--yes").exitCode == 0)

            let list = try await Self.cli(server, "audit", "list")
            #expect(list.exitCode == 0, "\(list)")
            #expect(list.stdoutLines.first == "TIME\tACTOR\tACTION\tTARGET\tSOURCE\tDETAILS")
            let rows = list.tableRows
            #expect(
                rows.map { [$0[2], $0[3]] } == [
                    ["user.delete", "user \(user)"], ["key.rotate", "key \(kid)"], ["user.sessions.revoke", "user \(user)"],
                    ["user.budget.set", "user \(user)"], ["access_code.issue", "user \(user)"],
                ], "\(list)")
            for row in rows {
                #expect(row[1] == "cli:\(Self.login)")
                #expect(row[4].hasPrefix("cli on "))
                #expect(try Date(row[0], strategy: .iso8601).timeIntervalSinceNow.magnitude < 120)
            }
            #expect(rows.first { $0[2] == "user.sessions.revoke" }?[5] == "1 session ended")
            #expect(rows.first { $0[2] == "user.budget.set" }?[5] == "limit 50.0")
            // The code is recorded by its ID, never itself.
            #expect(!list.stdout.contains(code))
            #expect(rows.first { $0[2] == "access_code.issue" }?[5].hasPrefix("code ") == true)
        }
    }

    @Test func aCommandThatFailsRecordsNothing() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { _ in
            let unknown = UUID().uuidString.lowercased()
            #expect(try await Self.cli(server, "users", "revoke-sessions", unknown).exitCode != 0)
            #expect(try await Self.cli(server, "access-code", "issue", "--user-id", unknown).exitCode != 0)
            let list = try await Self.cli(server, "audit", "list")
            #expect(list.exitCode == 0, "\(list)")
            #expect(list.tableRows.isEmpty, "\(list)")
        }
    }

    @Test func listFiltersBySinceAndAction() async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date().addingTimeInterval(20)))
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            #expect(try await Self.cli(server, "users", "budget", device.userID, "--set", "5").exitCode == 0)
            #expect(try await Self.cli(server, "keys", "rotate").exitCode == 0)

            #expect(try await Self.cli(server, "audit", "list", "--since", "1h").tableRows.count == 2)
            let future = Date().addingTimeInterval(3600).formatted(.iso8601)
            #expect(try await Self.cli(server, "audit", "list", "--since", future).tableRows.isEmpty)
            #expect(try await Self.cli(server, "audit", "list", "--action", "user").tableRows.map { $0[2] } == ["user.budget.set"])
            #expect(try await Self.cli(server, "audit", "list", "--action", "key.rotate").tableRows.map { $0[2] } == ["key.rotate"])
            #expect(try await Self.cli(server, "audit", "list", "--action", "use").tableRows.isEmpty)
            #expect(try await Self.cli(server, "audit", "list", "--limit", "1").tableRows.map { $0[2] } == ["key.rotate"])
            let bad = try await Self.cli(server, "audit", "list", "--since", "yesterday")
            #expect(bad.exitCode != 0)
            #expect(bad.stderr.contains("--since"), "\(bad)")
        }
    }
}
