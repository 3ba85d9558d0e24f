import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Recovery codes: ten, each good once, in any case with or without the dash, a new set voiding the old; using one
/// finishes a sign-in as `["pwd", "recovery"]`, tells the verified address at once and is audited.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorRecoveryTests {
    @Test func aRecoveryCodeFinishesASignInOnce() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let code = account.factor.recoveryCodes[0]
            let verified = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), recoveryCode: code)
            #expect(verified.status == .ok, "\(verified.text)")
            let signedIn = try claims(of: try verified.decode(TokenPairResponse.self).accessToken)
            #expect(signedIn.aal == .aal2 && signedIn.amr == [.password, .recovery], "\(signedIn)")

            let again = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), recoveryCode: code)
            #expect(again.status == .badRequest, "\(again.text)")
            #expect(again.envelope?.error.code == .invalidCode)
        }
    }

    @Test func aRecoveryCodeIsAcceptedInAnyCaseWithOrWithoutTheDash() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let codes = account.factor.recoveryCodes
            let typed = [
                codes[1].lowercased(), codes[2].replacingOccurrences(of: "-", with: ""),
                codes[3].lowercased().replacingOccurrences(of: "-", with: ""), codes[4],
            ]
            for code in typed {
                let verified = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), recoveryCode: code)
                #expect(verified.status == .ok, "\(code): \(verified.text)")
            }
        }
    }

    @Test func aCodeThatIsNoRecoveryCodeIsRefused() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            let madeUp = account.factor.recoveryCodes.contains("AAAAA-AAAAA") ? "BBBBB-BBBBB" : "AAAAA-AAAAA"
            let refused = try await client.verifyMFA(mfaToken, recoveryCode: madeUp)
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.envelope?.error.code == .invalidCode)
        }
    }

    @Test func aNewSetVoidsTheOldOne() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let aal2 = try await client.refresh(account.confirmingSession.refreshToken).decode(TokenPairResponse.self)
            let regenerated = try await client.regenerateRecoveryCodes(bearer: aal2.accessToken)
            #expect(regenerated.status == .ok, "\(regenerated.text)")
            let fresh = try regenerated.decode(RecoveryCodesResponse.self).recoveryCodes
            #expect(fresh.count == 10 && Set(fresh).count == 10 && fresh.allSatisfy(isRecoveryCodeShaped))
            #expect(Set(fresh).isDisjoint(with: account.factor.recoveryCodes))

            let old = try await client.verifyMFA(
                try await client.mfaChallenge(account.email, account.password), recoveryCode: account.factor.recoveryCodes[0])
            #expect(old.status == .badRequest, "\(old.text)")
            #expect(old.envelope?.error.code == .invalidCode)
            let new = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), recoveryCode: fresh[0])
            #expect(new.status == .ok, "\(new.text)")
        }
    }

    /// The notice goes at once although a verification mail went to the same address within the minute
    /// (`limits.mail-per-minute` is 1): it is a security notice, never held back by the per-address limits.
    @Test func usingARecoveryCodeMailsTheVerifiedAddressAtOnceAndIsAudited() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let code = account.factor.recoveryCodes[0]
            let verified = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), recoveryCode: code)
            #expect(verified.status == .ok, "\(verified.text)")

            let texts = try await peer.texts(to: account.email) { $0.localizedCaseInsensitiveContains("recovery code") }
            #expect(texts.contains { $0.localizedCaseInsensitiveContains("recovery code") }, "mails: \(texts)")

            let audit = try await AuditCLITests.cli(server, "audit", "list")
            #expect(audit.exitCode == 0, "\(audit)")
            let row = audit.tableRows.first { $0[2].contains("recovery") }
            #expect(row != nil, "no recovery-code use in the audit log: \(audit.stdout)")
            #expect(row.map { $0[3].contains(account.userID) || $0[1].contains(account.userID) } == true, "\(audit.stdout)")
            #expect(!audit.stdout.contains(code) && !audit.stdout.contains(code.replacingOccurrences(of: "-", with: "")))
        }
    }
}
