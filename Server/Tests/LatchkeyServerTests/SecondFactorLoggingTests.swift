import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The server's log, at `.trace`, never holds what second factors carry: the TOTP secret, a code (right or wrong), an
/// `mfa_token` or a recovery code (as shown or as typed).
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorLoggingTests {
    @Test func noLogLineHoldsASecretACodeAnMFATokenOrARecoveryCode() async throws {
        let peer = try await SMTPPeer.shared()
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger()) { $0.useMailPeer(peer) }
        let (secrets, codes) = try await server.test(.live) { client in
            let confirmedAt = server.clock.now()
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let totp = account.factor.totp
            var secrets = [account.factor.secret] + account.factor.recoveryCodes
            var codes = [totp.code(at: confirmedAt)]

            let first = try await client.mfaChallenge(account.email, account.password)
            let wrong = totp.wrongCode(at: server.clock.now())
            #expect(try await client.verifyMFA(first, code: wrong).status == .badRequest)
            #expect(try await client.verifyMFA(first, code: totp.code(at: server.clock.now())).status == .ok)
            codes += [wrong, totp.code(at: server.clock.now())]

            let second = try await client.mfaChallenge(account.email, account.password)
            let typed = account.factor.recoveryCodes[0].lowercased().replacingOccurrences(of: "-", with: "")
            #expect(try await client.verifyMFA(second, recoveryCode: typed).status == .ok)
            _ = try await peer.texts(to: account.email) { $0.localizedCaseInsensitiveContains("recovery code") }

            server.clock.advance(by: TOTPGenerator.period)
            let stepUpCode = totp.code(at: server.clock.now())
            let stepped = try await client.stepUp(code: stepUpCode, bearer: account.otherSession.accessToken)
            #expect(stepped.status == .ok)
            codes.append(stepUpCode)
            let regenerated = try await client.regenerateRecoveryCodes(bearer: try stepped.decode(TokenPairResponse.self).accessToken)
            secrets += [first, second, typed] + (try regenerated.decode(RecoveryCodesResponse.self).recoveryCodes)
            return (secrets, codes)
        }

        let needles = secrets + secrets.filter(isRecoveryCodeShaped).map { $0.replacingOccurrences(of: "-", with: "") }
        #expect(capture.lines.contains { $0.message == "request" })
        for line in capture.lines {
            let rendered = line.rendered
            for secret in needles where rendered.contains(secret) {
                Issue.record("a log line contains a secret (\(secret.prefix(4))…): \(line.message) [\(line.metadata.keys.sorted())]")
            }
            for code in codes where rendered.contains(try Regex("\\b\(code)\\b")) {
                Issue.record("a log line contains a TOTP code: \(line.message) [\(line.metadata.keys.sorted())]")
            }
        }
    }
}
