import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// A sensitive action of a user with a factor, done through the API by `session`; `factorID` is the user's factor.
enum SensitiveAction: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case deleteAccount, changePassword, removeFactor, regenerateRecoveryCodes

    var testDescription: String { self.rawValue }

    func perform(_ client: some TestClientProtocol, bearer: String, account: SecondFactorAccount) async throws -> TestResponse {
        switch self {
        case .deleteAccount:
            try await client.send(.delete, "/api/v1/users/me", bearer: bearer)
        case .changePassword:
            try await client.send(
                .post, "/api/v1/auth/change-password", bearer: bearer,
                body: ChangePasswordRequest(currentPassword: account.password, newPassword: "a brand new passphrase"))
        case .removeFactor:
            try await client.removeFactor(account.factor.factorID, bearer: bearer)
        case .regenerateRecoveryCodes:
            try await client.regenerateRecoveryCodes(bearer: bearer)
        }
    }
}

/// Step-up (`POST /api/v1/mfa/verify {code}` with a session's Bearer) and the actions that need it: for a user with a
/// factor, deleting the account, changing the password, removing the factor and new recovery codes answer 403
/// `aal2_required` until the session is `aal2` by a step-up made within `mfa.step-up-lifetime` (10 minutes).
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorStepUpTests {
    @Test func aStepUpGivesTheSameSessionANewAAL2Pair() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let session = account.otherSession
            let stepped = try await client.stepUp(code: account.factor.totp.code(at: server.clock.now()), bearer: session.accessToken)
            #expect(stepped.status == .ok, "\(stepped.text)")
            let pair = try stepped.decode(TokenPairResponse.self)
            #expect(pair.sessionID == session.sessionID && pair.userID == account.userID)
            let stepClaims = try claims(of: pair.accessToken)
            #expect(stepClaims.sessionID == session.sessionID)
            #expect(stepClaims.aal == .aal2 && stepClaims.amr == [.password, .otp], "\(stepClaims)")
            #expect(try await client.refresh(pair.refreshToken).status == .ok)
        }
    }

    @Test func aWrongStepUpCodeIs400AndLeavesTheSessionAtAAL1() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let session = account.otherSession
            let refused = try await client.stepUp(code: account.factor.totp.wrongCode(at: server.clock.now()), bearer: session.accessToken)
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.envelope?.error.code == .invalidCode)
            let refreshed = try await client.refresh(session.refreshToken).decode(TokenPairResponse.self)
            #expect(try claims(of: refreshed.accessToken).aal == .aal1)
        }
    }

    @Test(arguments: SensitiveAction.allCases)
    func aSensitiveActionOfAUserWithAFactorNeedsAStepUp(action: SensitiveAction) async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let session = account.otherSession
            let refused = try await action.perform(client, bearer: session.accessToken, account: account)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .aal2Required)

            let stepped = try await client.stepUp(code: account.factor.totp.code(at: server.clock.now()), bearer: session.accessToken)
            let pair = try stepped.decode(TokenPairResponse.self)
            let allowed = try await action.perform(client, bearer: pair.accessToken, account: account)
            #expect((200..<300).contains(allowed.status.code), "\(allowed.status) \(allowed.text)")
        }
    }

    /// Nothing is asked of a user without a factor: the rule is for those who have one.
    @Test func aUserWithoutAFactorChangesThePasswordAtAAL1() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, SecondFactorAccount.password, peer: peer)
            let changed = try await client.send(
                .post, "/api/v1/auth/change-password", bearer: session.accessToken,
                body: ChangePasswordRequest(currentPassword: SecondFactorAccount.password, newPassword: "a brand new passphrase"))
            #expect(changed.status == .ok, "\(changed.text)")
        }
    }

    /// The session that confirmed the factor proved it just now: it may act at once, with its next access token.
    @Test func theConfirmingSessionActsAfterItsNextRefresh() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let refreshed = try await client.refresh(account.confirmingSession.refreshToken).decode(TokenPairResponse.self)
            let regenerated = try await client.regenerateRecoveryCodes(bearer: refreshed.accessToken)
            #expect(regenerated.status == .ok, "\(regenerated.text)")
        }
    }

    /// A step-up lasts `mfa.step-up-lifetime` (10 minutes): still good after 9, refused after 10, though the session is
    /// `aal2` and its sign-in counts as recent (`tokens.recent-authentication` raised out of the way).
    @Test func aStepUpLastsTenMinutes() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.tokens.recentAuthentication = 86_400
        }
        try await server.test(.live) { client in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let stepped = try await client.stepUp(
                code: account.factor.totp.code(at: server.clock.now()), bearer: account.otherSession.accessToken)
            let pair = try stepped.decode(TokenPairResponse.self)
            server.clock.advance(by: 9 * 60)
            #expect(try await client.regenerateRecoveryCodes(bearer: pair.accessToken).status == .ok)
            server.clock.advance(by: 61)
            let stale = try await client.regenerateRecoveryCodes(bearer: pair.accessToken)
            #expect(stale.status == .forbidden, "\(stale.text)")
            #expect(stale.envelope?.error.code == .aal2Required)
            // A refresh does not make the step-up recent again.
            let refreshed = try await client.refresh(pair.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.regenerateRecoveryCodes(bearer: refreshed.accessToken).envelope?.error.code == .aal2Required)
        }
    }

    /// Removing the factor (at `aal2`) ends holding sign-ins back: the password alone signs in again.
    @Test func removingTheFactorLetsThePasswordAloneSignIn() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let aal2 = try await client.refresh(account.confirmingSession.refreshToken).decode(TokenPairResponse.self)
            let removed = try await client.removeFactor(account.factor.factorID, bearer: aal2.accessToken)
            #expect((200..<300).contains(removed.status.code), "\(removed.status) \(removed.text)")
            #expect(try await client.factors(bearer: aal2.accessToken).decode(MFAFactorsResponse.self).factors.isEmpty)
            let login = try await client.login(account.email, account.password)
            #expect(login.status == .ok, "\(login.text)")
        }
    }
}
