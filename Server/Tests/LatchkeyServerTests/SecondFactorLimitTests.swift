import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// `limits.mfa-failures` (10 per 15 minutes by default): wrong codes per user, whichever route they came through and
/// however many `mfa_token`s they were spread over.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorLimitTests {
    /// Ten failures — two confirms, two step-ups and six verifies on two tokens (none spent) — hold the user back: the
    /// next verify, the right code included, and the next step-up are 429 with `Retry-After`. Another user is not held
    /// back, and once the window has passed the user signs in again.
    @Test func tenFailuresAcrossConfirmsStepUpsAndTokensHoldTheUserBackForFifteenMinutes() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let password = SecondFactorAccount.password
            let session = try await client.verifiedAccount(email, password, peer: peer)
            let other = try await client.login(email, password).decode(TokenPairResponse.self)
            let enrolment = try await client.enrollTOTP(bearer: session.accessToken).decode(TOTPEnrollmentResponse.self)
            let totp = try TOTPGenerator(secret: enrolment.secret)
            var failures = 0
            func expectFailure(_ response: TestResponse, _ what: String) {
                failures += 1
                #expect(response.status == .badRequest, "failure \(failures) (\(what)): \(response.status) \(response.text)")
                #expect(response.envelope?.error.code == .invalidCode, "failure \(failures) (\(what))")
            }
            let wrong = { totp.wrongCode(at: server.clock.now()) }

            for _ in 1...2 { expectFailure(try await client.confirmTOTP(enrolment.factorID, code: wrong(), bearer: session.accessToken), "confirm") }
            let confirmed = try await client.confirmTOTP(enrolment.factorID, code: totp.code(at: server.clock.now()), bearer: session.accessToken)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            server.clock.advance(by: TOTPGenerator.period)
            for _ in 1...2 { expectFailure(try await client.stepUp(code: wrong(), bearer: other.accessToken), "step-up") }
            for _ in 1...2 {
                let mfaToken = try await client.mfaChallenge(email, password)
                for _ in 1...3 { expectFailure(try await client.verifyMFA(mfaToken, code: wrong()), "verify") }
            }
            #expect(failures == 10)

            let held = try await client.verifyMFA(try await client.mfaChallenge(email, password), code: totp.code(at: server.clock.now()))
            #expect(held.status == .tooManyRequests, "\(held.text)")
            #expect(held.envelope != nil, "\(held.text)")
            let retryAfter = try #require(held.headers[.retryAfter].flatMap { Int($0) }, "no Retry-After")
            #expect((1...900).contains(retryAfter))
            let heldStepUp = try await client.stepUp(code: totp.code(at: server.clock.now()), bearer: other.accessToken)
            #expect(heldStepUp.status == .tooManyRequests, "\(heldStepUp.text)")
            #expect(heldStepUp.headers[.retryAfter] != nil)

            let bystander = try await client.accountWithSecondFactor(peer: peer, server: server)
            let bystanderToken = try await client.mfaChallenge(bystander.email, bystander.password)
            #expect(try await client.verifyMFA(bystanderToken, code: bystander.factor.totp.code(at: server.clock.now())).status == .ok)

            server.clock.advance(by: 15 * 60 + 1)
            let later = try await client.verifyMFA(try await client.mfaChallenge(email, password), code: totp.code(at: server.clock.now()))
            #expect(later.status == .ok, "\(later.text)")
        }
    }

    /// Nine failures are not yet the limit: the right code still signs in.
    @Test func nineFailuresStillLetTheRightCodeIn() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let wrong = account.factor.totp.wrongCode(at: server.clock.now())
            for count in [5, 4] {
                let mfaToken = try await client.mfaChallenge(account.email, account.password)
                for _ in 0..<count { #expect(try await client.verifyMFA(mfaToken, code: wrong).status == .badRequest) }
            }
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            let verified = try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now()))
            #expect(verified.status == .ok, "\(verified.text)")
        }
    }
}
