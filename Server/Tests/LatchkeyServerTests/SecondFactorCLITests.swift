import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// `latchkey users mfa-reset <id>`, support's way back in for a user who lost the authenticator and the recovery
/// codes: the built executable against the database of a server running in this process.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorCLITests {
    @Test func mfaResetRemovesTheFactorsKeepsTheSessionsAndIsAudited() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let run = try await AuditCLITests.cli(server, "users", "mfa-reset", account.userID)
            #expect(run.exitCode == 0, "\(run)")

            let login = try await client.login(account.email, account.password)
            #expect(login.status == .ok, "\(login.text)")
            let session = try login.decode(TokenPairResponse.self)
            let signedIn = try claims(of: session.accessToken)
            #expect(signedIn.aal == .aal1 && signedIn.amr == [.password], "\(signedIn)")
            #expect(try await client.factors(bearer: session.accessToken).decode(MFAFactorsResponse.self).factors.isEmpty)
            // The sessions of before are kept.
            #expect(try await client.refresh(account.otherSession.refreshToken).status == .ok)
            #expect(try await client.refresh(account.confirmingSession.refreshToken).status == .ok)
            // Nothing secret is printed.
            #expect(!run.stdout.contains(account.factor.secret))

            let audit = try await AuditCLITests.cli(server, "audit", "list")
            #expect(audit.exitCode == 0, "\(audit)")
            let row = audit.tableRows.first { $0[2].contains("mfa") }
            #expect(row?[1] == "cli:\(AuditCLITests.login)", "\(audit.stdout)")
            #expect(row?[3] == "user \(account.userID)", "\(audit.stdout)")
        }
    }

    @Test func mfaResetOfAnUnknownUserFailsNamingItAndRecordsNothing() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { _ in
            let unknown = UUID().uuidString.lowercased()
            let run = try await AuditCLITests.cli(server, "users", "mfa-reset", unknown)
            #expect(run.exitCode != 0, "\(run)")
            #expect(run.stderr.contains(unknown), "\(run)")
            #expect(try await AuditCLITests.cli(server, "audit", "list").tableRows.isEmpty)
        }
    }
}
