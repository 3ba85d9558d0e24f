import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// `latchkey-device mfa enroll|confirm|verify` as a person at a terminal uses them: codes on standard input.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct LatchkeyDeviceMFACommandTests {
    @Test func enrollConfirmThenALoginNeedsTheCodeFromTheTerminal() async throws {
        try await EmailPasswordEndToEndTests.withMailingServer { server in
            let app = try DeviceApp(server: server.url)
            defer { app.remove() }
            let userID = try await app.register()
            let email = EmailPasswordEndToEndTests.address("terminal-mfa")
            #expect(try await app.run(input: "correct horse battery\n", "signup", "--email", email).exitCode == 0)
            let verification = try await EmailPasswordEndToEndTests.newMail(to: email)
            #expect(try await app.run(input: verification.code + "\n", "verify", "--email", email, "--code").exitCode == 0)

            let enroll = try await app.json("mfa", "enroll")
            #expect(enroll.result.exitCode == 0, "\(enroll.result)")
            let factorID = try #require(enroll.object["factor_id"] as? String)
            let secret = try #require(enroll.object["secret"] as? String)
            let confirm = try await app.json(input: TOTP.code(secret, at: server.clock.now()) + "\n", "mfa", "confirm", factorID)
            #expect(confirm.result.exitCode == 0, "\(confirm.result)")
            let codes = try #require(confirm.object["recovery_codes"] as? [String])
            #expect(codes.count == 10)

            #expect(try await app.run("signout").exitCode == 0)
            let login = try await app.run(input: "correct horse battery\n", "login", "--email", email)
            #expect(login.exitCode == 3, "\(login)")
            #expect(login.stderr.contains("mfa verify") || login.stdout.contains("mfa verify"), "\(login)")
            let wrong = try await app.run(input: "000000\n", "mfa", "verify")
            #expect(wrong.exitCode != 0, "\(wrong)")
            let verify = try await app.json(input: TOTP.code(secret, at: server.clock.now() + 30) + "\n", "mfa", "verify")
            #expect(verify.result.exitCode == 0, "\(verify.result)")
            #expect(verify.object["user_id"] as? String == userID)
            #expect(verify.object["aal"] as? String == "aal2", "\(verify.object)")

            for result in [enroll.result, confirm.result, verify.result, login, wrong] {
                #expect(!result.stdout.contains("correct horse battery") && !result.stderr.contains("correct horse battery"))
            }
        }
    }
}
