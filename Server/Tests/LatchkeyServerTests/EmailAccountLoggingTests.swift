import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The server's log never holds what the email flows carry: codes, link tokens, passwords, the relay's password.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct EmailAccountLoggingTests {
    @Test func noLogLineContainsACodeALinkTokenOrAPassword() async throws {
        let peer = try await SMTPPeer.shared()
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger()) { $0.useMailPeer(peer, startTLS: true) }
        let email = newAddress()
        let password = "correct horse battery staple"
        let newPassword = "a brand new passphrase"
        let mails = try await server.test(.live) { client in
            _ = try await client.register(email, password)
            let verification = try await peer.mail(to: email)
            _ = try await client.send(.get, "/api/v1/auth/verify-email?token=\(verification.token)")
            #expect(try await client.verify(email, code: verification.code).status == .ok)
            #expect(try await client.login(email, "a wrong password, logged?").status == .unauthorized)
            #expect(try await client.login(email, password).status == .ok)

            server.clock.advance(by: 61)
            _ = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: email))
            let reset = try #require(try await peer.mails(to: email, count: 2).last)
            _ = try await client.send(.get, "/api/v1/auth/reset-password?token=\(reset.token)")
            #expect(try await client.postForm("/api/v1/auth/reset-password/form", ["token": reset.token, "new_password": newPassword]).status == .ok)
            #expect(try await client.login(email, newPassword).status == .ok)
            return [verification, reset]
        }

        let secrets = [password, newPassword, "a wrong password, logged?", peer.password] + mails.map(\.token)
        let codes = mails.map(\.code)
        #expect(capture.lines.contains { $0.message == "mail sent" })
        for line in capture.lines {
            let rendered = line.rendered
            for secret in secrets where rendered.contains(secret) {
                Issue.record("a log line contains a secret (\(secret.prefix(6))…): \(line.message) [\(line.metadata.keys.sorted())]")
            }
            for code in codes where rendered.contains(try Regex("\\b\(code)\\b")) {
                Issue.record("a log line contains a mailed code: \(line.message) [\(line.metadata.keys.sorted())]")
            }
        }
    }
}
