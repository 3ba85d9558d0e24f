import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The `mfa_token` of a held-back sign-in (single use, five minutes, five wrong codes) and the codes it takes: RFC 6238
/// with one step of skew either side on the server's clock, each step accepted once.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorChallengeTests {
    @Test func aSessionStartedWithOneFactorIsAAL1NamingIt() async throws {
        try await withMailServer { client, server, peer in
            let session = try await client.verifiedAccount(newAddress(), SecondFactorAccount.password, peer: peer)
            let signedIn = try claims(of: session.accessToken)
            #expect(signedIn.aal == .aal1 && signedIn.amr == [.password], "\(signedIn)")
        }
    }

    @Test func anMFATokenIsSingleUse() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            #expect(try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now())).status == .ok)
            server.clock.advance(by: TOTPGenerator.period)
            let again = try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now()))
            #expect(again.status == .unauthorized, "\(again.text)")
            #expect(again.envelope?.error.code == .invalidMFAToken)
        }
    }

    @Test func anMFATokenLivesFiveMinutes() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let early = try await client.mfaChallenge(account.email, account.password)
            let late = try await client.mfaChallenge(account.email, account.password)
            server.clock.advance(by: 290)
            let inTime = try await client.verifyMFA(early, code: account.factor.totp.code(at: server.clock.now()))
            #expect(inTime.status == .ok, "\(inTime.text)")
            server.clock.advance(by: TOTPGenerator.period)  // 320 s after the sign-in, on a fresh step
            let expired = try await client.verifyMFA(late, code: account.factor.totp.code(at: server.clock.now()))
            #expect(expired.status == .unauthorized, "\(expired.text)")
            #expect(expired.envelope?.error.code == .invalidMFAToken)
        }
    }

    @Test func fiveWrongCodesSpendTheMFAToken() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            let wrong = account.factor.totp.wrongCode(at: server.clock.now())
            for attempt in 1...5 {
                let refused = try await client.verifyMFA(mfaToken, code: wrong)
                #expect(refused.status == .badRequest, "attempt \(attempt): \(refused.text)")
                #expect(refused.envelope?.error.code == .invalidCode)
            }
            let spent = try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now()))
            #expect(spent.status == .unauthorized, "\(spent.text)")
            #expect(spent.envelope?.error.code == .invalidMFAToken)
        }
    }

    @Test func fourWrongCodesLeaveTheMFATokenUsable() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            let wrong = account.factor.totp.wrongCode(at: server.clock.now())
            for _ in 1...4 { #expect(try await client.verifyMFA(mfaToken, code: wrong).status == .badRequest) }
            #expect(try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now())).status == .ok)
        }
    }

    @Test func anUnknownMFATokenIs401() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            for token in ["not-a-token", String(repeating: "A", count: 43)] {
                let refused = try await client.verifyMFA(token, code: account.factor.totp.code(at: server.clock.now()))
                #expect(refused.status == .unauthorized, "\(refused.text)")
                #expect(refused.envelope?.error.code == .invalidMFAToken)
            }
        }
    }

    /// RFC 6238 §5.2: one step of skew either side; two steps off is a wrong code. The refusals come first: a server
    /// that takes no step at or before the last one accepted would refuse the earlier ones for another reason.
    @Test func codesOfOneStepEitherSideAreAcceptedAndOfTwoStepsAreNot() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            // The confirm's step is three behind: every step tried here is one no code was ever accepted for.
            server.clock.advance(by: 2 * TOTPGenerator.period)
            let (totp, now) = (account.factor.totp, server.clock.now())
            let first = try await client.mfaChallenge(account.email, account.password)
            for steps: Int64 in [-2, 2] {
                let refused = try await client.verifyMFA(first, code: totp.code(at: now, steps: steps))
                #expect(refused.status == .badRequest, "step \(steps): \(refused.text)")
                #expect(refused.envelope?.error.code == .invalidCode, "step \(steps)")
            }
            let behind = try await client.verifyMFA(first, code: totp.code(at: now, steps: -1))
            #expect(behind.status == .ok, "the previous step: \(behind.text)")
            let second = try await client.mfaChallenge(account.email, account.password)
            let ahead = try await client.verifyMFA(second, code: totp.code(at: now, steps: 1))
            #expect(ahead.status == .ok, "the next step: \(ahead.text)")
        }
    }

    /// A code is accepted once: the same step again, on a new `mfa_token`, is refused with exactly the answer of a wrong
    /// code, so a replay tells an attacker nothing.
    @Test func aCodeVerifiesOnceAndItsReplayGetsTheAnswerOfAWrongCode() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let code = account.factor.totp.code(at: server.clock.now())
            let first = try await client.mfaChallenge(account.email, account.password)
            #expect(try await client.verifyMFA(first, code: code).status == .ok)

            let replayed = try await client.verifyMFA(try await client.mfaChallenge(account.email, account.password), code: code)
            let wrong = try await client.verifyMFA(
                try await client.mfaChallenge(account.email, account.password), code: account.factor.totp.wrongCode(at: server.clock.now()))
            #expect(replayed.status == .badRequest, "\(replayed.text)")
            #expect(replayed.envelope?.error.code == .invalidCode)
            #expect(replayed.status == wrong.status && replayed.text == wrong.text)
        }
    }

    /// The step a confirm used is spent too: the first sign-in in the same 30 seconds needs the next step's code.
    @Test func theStepAConfirmUsedCannotSignIn() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, SecondFactorAccount.password, peer: peer)
            let now = server.clock.now()
            let factor = try await client.confirmedFactor(bearer: session.accessToken, at: now)
            let mfaToken = try await client.mfaChallenge(email, SecondFactorAccount.password)
            let replayed = try await client.verifyMFA(mfaToken, code: factor.totp.code(at: now))
            #expect(replayed.status == .badRequest, "\(replayed.text)")
            #expect(replayed.envelope?.error.code == .invalidCode)
            #expect(try await client.verifyMFA(mfaToken, code: factor.totp.code(at: now, steps: 1)).status == .ok)
        }
    }
}
