import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The `latchkey` support commands, run as the built executable against the database of a server that is
/// running (over a real socket) in this process: what support staff do to a live deployment.
@Suite(.timeLimit(.minutes(3)))
struct CLITests {
    /// Runs `body` against a live server whose manual clock stands a little ahead of the real time: the CLI
    /// signs with the system clock, so its codes must be current (not in the future) for this server.
    /// The clock still moves only when a test advances it.
    ///
    /// The server's background timers (key reload every 30 s, revocation feed every 1 s, both on the real
    /// clock) are set far out, so what a test sees never depends on whether a timer happened to fire:
    /// whatever the server learns from the CLI's writes, it learns on the paths the test drives.
    func withLiveServer(_ body: @Sendable @escaping (any TestClientProtocol, TestServer) async throws -> Void) async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date().addingTimeInterval(20))) { configuration in
            configuration.keyReloadInterval = 3600
            configuration.revocationPollInterval = 3600
        }
        try await server.test(.live) { client in try await body(client, server) }
    }

    /// Issues a code with the CLI and returns it, failing when the command did not print exactly one line.
    func issueCode(on server: TestServer, for userID: String, _ extra: String...) async throws -> String {
        let run = try await LatchkeyCLI.run(
            ["access-code", "issue", "--user-id", userID] + extra + ["--database", server.databasePath], masterKey: TestServer.masterKey,
            workingDirectory: server.directory)
        guard run.exitCode == 0, run.stdoutLines.count == 1 else { throw TestFailure("issuing failed: \(run)") }
        // The CLI signs on the system clock: a slow process start must not leave the code's nbf ahead of the server.
        let lag = Date().timeIntervalSince(server.clock.now())
        if lag > 0 { server.clock.advance(by: lag) }
        return run.stdoutLines[0]
    }

    // MARK: access-code issue

    @Test func issuePrintsOnlyTheCodeOnStdout() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let run = try await server.cli("access-code", "issue", "--user-id", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.hasSuffix("\n"))
            #expect(run.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 2, "one line, got: \(run.stdout)")
            let line = try #require(run.stdoutLines.first)
            #expect(line.split(separator: ".", omittingEmptySubsequences: false).count == 3)
            #expect(try Forge.header(of: line).alg == "ES256")
        }
    }

    @Test func anIssuedCodeWorksAsABearerOnUsersMe() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let code = try await self.issueCode(on: server, for: device.userID)
            let response = try await client.me(code)
            #expect(response.status == .ok)
            let profile = try response.decode(UserProfile.self)
            #expect(profile.userID == device.userID)
            #expect(profile.tokenKind == .accessCode)
        }
    }

    @Test func validateTokenReportsAnIssuedCodeAsAnAccessCodeForTheDevice() async throws {
        try await self.withLiveServer { client, server in
            let deviceUUID = UUID()
            let device = try await client.registerDevice(deviceUUID)
            // The uppercase form a device may hold names the same user.
            let code = try await self.issueCode(on: server, for: deviceUUID.uuidString.uppercased())
            let response = try await client.validate(code)
            #expect(response.status == .ok)
            let answer = try response.decode(ValidateTokenResponse.self)
            #expect(answer.kind == .accessCode)
            #expect(answer.sub == deviceUUID.uuidString.lowercased())
            #expect(answer.sub == device.userID)
        }
    }

    @Test func expiresInSetsTheCodesLifetime() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let claims = try Forge.claims(of: try await self.issueCode(on: server, for: device.userID, "--expires-in", "2h"))
            #expect(claims.expiresAt == claims.issuedAt + 7200)
        }
    }

    @Test(arguments: ["abc", "0", "-5", "12x", "h", "1e30d", "367d", "nan", "inf"])
    func aBadDurationIsRefusedAndIssuesNothing(duration: String) async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let run = try await LatchkeyCLI.run(
                ["access-code", "issue", "--user-id", device.userID, "--expires-in=\(duration)", "--database", server.databasePath],
                masterKey: TestServer.masterKey, workingDirectory: server.directory)
            #expect(run.exitCode == 2, "\(run)")  // a usage error, not a crash
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("'\(duration)' is"), "\(run.stderr)")
            #expect(try await server.services.accessCodes.list().isEmpty)
        }
    }

    /// A PostgreSQL password on the command line would show in the process list: refused, without echoing it.
    @Test func aDatabaseURLWithAPasswordIsRefusedOnTheCommandLine() async throws {
        let directory = FileManager.default.temporaryDirectory
        for command in [["users", "list"], ["serve"]] {
            let run = try await LatchkeyCLI.run(
                command + ["--database", "postgres://latchkey:hunter2-secret@127.0.0.1:1/latchkey"], masterKey: TestServer.masterKey,
                workingDirectory: directory)
            #expect(run.exitCode == 2, "\(run)")
            #expect(run.stderr.contains("LATCHKEY_DATABASE"), "\(run.stderr)")
            #expect(!run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"))
        }
    }

    @Test func issuingForAnUnknownUserFailsNamingTheUser() async throws {
        try await self.withLiveServer { _, server in
            let unknown = UUID().uuidString.lowercased()
            let run = try await server.cli("access-code", "issue", "--user-id", unknown)
            #expect(run.exitCode != 0)
            #expect(run.stdout.isEmpty, "nothing on stdout, got: \(run.stdout)")
            #expect(run.stderr.contains(unknown), "\(run)")
            #expect(try await server.services.accessCodes.list().isEmpty)
        }
    }

    @Test func issuingForANonUUIDFails() async throws {
        try await self.withLiveServer { _, server in
            let run = try await server.cli("access-code", "issue", "--user-id", "not-a-uuid")
            #expect(run.exitCode != 0)
            #expect(run.stdout.isEmpty)
            #expect(!run.stderr.isEmpty)
        }
    }

    // MARK: access-code list and revoke

    @Test func listShowsTheCodeByItsJTIAsActiveWithItsNote() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let note = "support ticket 4711"
            let code = try await self.issueCode(on: server, for: device.userID, "--note", note)
            let jti = try Forge.claims(of: code).tokenID
            let run = try await server.cli("access-code", "list")
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdoutLines.first?.hasPrefix("ID\t") == true)
            let rows = run.tableRows.filter { $0.first == jti }
            #expect(rows.count == 1, "\(run)")
            let row = try #require(rows.first)
            #expect(row.count == 6)
            #expect(row[1] == device.userID)
            #expect(row[4] == "active")
            #expect(row[5] == note)
        }
    }

    @Test func revokeMakesTheListShowTheCodeRevoked() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let jti = try Forge.claims(of: try await self.issueCode(on: server, for: device.userID)).tokenID
            let revoke = try await server.cli("access-code", "revoke", jti)
            #expect(revoke.exitCode == 0, "\(revoke)")
            let row = try await server.cli("access-code", "list").tableRows.first { $0.first == jti }
            #expect(row?[4] == "revoked")
        }
    }

    @Test func aRevokedCodeNeverUsedBeforeIsRefusedByTheRunningServer() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let code = try await self.issueCode(on: server, for: device.userID)
            let revoke = try await server.cli("access-code", "revoke", try Forge.claims(of: code).tokenID)
            #expect(revoke.exitCode == 0, "\(revoke)")
            try await expectRefused(code, by: client)
        }
    }

    /// The code was in use (the running server has verified it) when support revoked it from another process.
    @Test func aRevokedCodeInUseIsRefusedAtOnceByTheRunningServer() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let code = try await self.issueCode(on: server, for: device.userID)
            try await expectAccepted(code, by: client)
            let revoke = try await server.cli("access-code", "revoke", try Forge.claims(of: code).tokenID)
            #expect(revoke.exitCode == 0, "\(revoke)")
            try await expectRefused(code, by: client)
        }
    }

    @Test func revokingAnUnknownCodeFails() async throws {
        try await self.withLiveServer { _, server in
            let run = try await server.cli("access-code", "revoke", UUID().uuidString.lowercased())
            #expect(run.exitCode != 0)
            #expect(run.stdout.isEmpty)
        }
    }

    // MARK: keys

    @Test func keysRotatePrintsTheNewKIDAndListShowsTwoKeysOneActive() async throws {
        try await self.withLiveServer { _, server in
            let before = try await server.services.keyRing.records()
            #expect(before.count == 1)
            let rotate = try await server.cli("keys", "rotate", "--now")
            #expect(rotate.exitCode == 0, "\(rotate)")
            #expect(rotate.stdoutLines.count == 1)
            let kid = try #require(rotate.stdoutLines.first)
            #expect(kid != before.first?.kid)
            let list = try await server.cli("keys", "list")
            #expect(list.exitCode == 0, "\(list)")
            let rows = list.tableRows
            #expect(rows.count == 2, "\(list)")
            #expect(Set(rows.map { $0[0] }) == [kid, before[0].kid])
            #expect(rows.filter { $0[3] == "active" }.map { $0[0] } == [kid])
        }
    }

    /// A code the CLI signs after `keys rotate` names a kid the running server has not loaded: the server
    /// must reload its keys and accept it (the reload-on-unknown-kid path), and its JWKS then lists both keys.
    @Test func aCodeSignedByARotatedKeyVerifiesOnTheRunningServer() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let oldKID = try Forge.header(of: device.accessToken).kid
            let rotate = try await server.cli("keys", "rotate", "--now")
            #expect(rotate.exitCode == 0, "\(rotate)")
            let newKID = try #require(rotate.stdoutLines.first)
            let code = try await self.issueCode(on: server, for: device.userID)
            #expect(try Forge.header(of: code).kid == newKID)
            // Reloads for unknown kids are throttled to one per 5 s; the server loaded its keys at start.
            server.clock.advance(by: 6)
            try await expectAccepted(code, by: client)
            let kids = try await client.jwks().keys.map(\.kid)
            #expect(Set(kids) == [newKID, try #require(oldKID)])
        }
    }

    @Test func tokensSignedBeforeARotationStillVerifyAfterTheServerReloads() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            #expect(try await server.cli("keys", "rotate", "--now").exitCode == 0)
            let code = try await self.issueCode(on: server, for: device.userID)
            server.clock.advance(by: 6)
            try await expectAccepted(code, by: client)
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    @Test func theRunningServerSignsWithTheRotatedKeyOnceItReloads() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let newKID = try #require(try await server.cli("keys", "rotate", "--now").stdoutLines.first)
            let code = try await self.issueCode(on: server, for: device.userID)
            server.clock.advance(by: 6)
            try await expectAccepted(code, by: client)
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            #expect(try Forge.header(of: refreshed.accessToken).kid == newKID)
        }
    }

    // MARK: users

    @Test func usersListShowsTheRegisteredUser() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let run = try await server.cli("users", "list")
            #expect(run.exitCode == 0, "\(run)")
            let rows = run.tableRows.filter { $0.first == device.userID }
            #expect(rows.count == 1, "\(run)")
            #expect(rows.first?[1] == "device")
        }
    }

    @Test func usersShowShowsTheUsersDevice() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let run = try await server.cli("users", "show", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdoutLines.contains("id: \(device.userID)"))
            #expect(run.stdoutLines.contains("kind: device"))
            #expect(run.stdoutLines.contains("devices: 1"))
            #expect(run.stdoutLines.contains { $0.hasPrefix("  \(device.userID) registered ") }, "\(run)")
        }
    }

    @Test func usersShowFailsForAnUnknownUser() async throws {
        try await self.withLiveServer { _, server in
            let unknown = UUID().uuidString.lowercased()
            let run = try await server.cli("users", "show", unknown)
            #expect(run.exitCode != 0)
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains(unknown))
        }
    }

    @Test func usersDeleteSucceedsAndTheUserIsGone() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let delete = try await server.cli("users", "delete", device.userID, "--yes")
            #expect(delete.exitCode == 0, "\(delete)")
            let show = try await server.cli("users", "show", device.userID)
            #expect(show.exitCode != 0, "\(show)")
            #expect(show.stdout.isEmpty)
            let list = try await server.cli("users", "list")
            #expect(!list.tableRows.contains { $0.first == device.userID })
        }
    }

    /// The session was in use (the running server has verified and cached its access token) when support
    /// deleted the account from another process: the server drops it once it reads the revocation feed the
    /// CLI wrote to (every `revocations.poll-interval`, 1 s by default; this test polls explicitly).
    @Test func aDeletedUsersAccessTokenInUseIsRefusedOnceTheServerReadsTheRevocationFeed() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            // On PostgreSQL the CLI's NOTIFY may have made the server read the feed already; reading it again
            // is harmless. (The token stays cached for up to 60 s otherwise, so this fails if the feed is not read.)
            _ = try await server.services.revocations.poll()
            try await expectRefused(device.accessToken, by: client)
        }
    }

    @Test func aDeletedUsersAccessTokenNeverUsedBeforeIsRefused() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            try await expectRefused(device.accessToken, by: client)
        }
    }

    @Test func aDeletedUsersRefreshTokenIsRefused() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            let response = try await client.refresh(device.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func aDeletedUsersAccessCodeInUseIsRefusedAtOnceByTheRunningServer() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let code = try await self.issueCode(on: server, for: device.userID)
            try await expectAccepted(code, by: client)
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            try await expectRefused(code, by: client)
        }
    }
}
