import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Resetting a forgotten password by mail (code or link) and changing a known one: who stays signed in.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct PasswordResetTests {
    static let password = "correct horse battery staple"
    static let newPassword = "a brand new passphrase"

    /// Asks for a reset of `email` (a minute after its last mail, so the per-address limit lets it go) and returns its mail.
    static func resetMail(_ email: String, client: some TestClientProtocol, server: TestServer, peer: SMTPPeer) async throws -> AccountMail {
        server.clock.advance(by: 61)
        let requested = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: email))
        guard requested.status == .accepted else { throw TestFailure("reset-password answered \(requested.status)") }
        let mail = try #require(try await peer.mails(to: email, count: 2).last)
        #expect(EncodedWordDecoder.decode(mail.message.headers["subject"] ?? "") == "Reset your Latchkey password")
        return mail
    }

    /// The per-address mail limit is taken before the reset mail is queued: 20 requests at once queue one mail a minute.
    @Test func concurrentResetRequestsQueueOneMailAMinute() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.accountLimits.email.limit = 1000  // the per-client limit out of the way of 80 requests
        }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            for minute in 1...4 {  // the registration's mail and four more: the hour's five
                server.clock.advance(by: 61)
                let queued = try await racingMailRequests(20, to: "/api/v1/auth/reset-password", for: email, client: client, server: server)
                #expect(queued == 1 + minute, "after the requests of minute \(minute)")
            }
        }
    }

    @Test func askingForAResetAnswersTheSameForAnUnknownAddress() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let known = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: email))
            let unknown = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: newAddress()))
            #expect(known.status == .accepted && unknown.status == .accepted)
            #expect(known.text == unknown.text)
        }
    }

    @Test func theResetCodeSetsTheNewPasswordAndEndsEverySession() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let first = try await client.verifiedAccount(email, Self.password, peer: peer)
            let second = try await client.login(email, Self.password).decode(TokenPairResponse.self)
            let mail = try await Self.resetMail(email, client: client, server: server, peer: peer)

            let confirmed = try await client.send(
                .post, "/api/v1/auth/reset-password/confirm",
                body: ResetPasswordConfirmRequest(email: email, code: mail.code, newPassword: Self.newPassword))
            #expect(confirmed.status == .ok)
            #expect(
                try confirmed.decode(PasswordChangedResponse.self)
                    == PasswordChangedResponse(userID: first.userID, revokedSessions: 2, revokedDevices: 0))
            #expect(try await client.me(first.accessToken).status == .unauthorized)
            #expect(try await client.me(second.accessToken).status == .unauthorized)
            #expect(try await client.login(email, Self.password).envelope?.error.code == .invalidCredentials)
            #expect(try await client.login(email, Self.newPassword).status == .ok)
        }
    }

    @Test func theResetLinkOpensAFormWhosePostSetsTheNewPassword() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            let token = try await Self.resetMail(email, client: client, server: server, peer: peer).token

            let page = try await client.send(.get, "/api/v1/auth/reset-password?token=\(token)")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.text.contains(#"name="new_password""#))
            #expect(try await client.login(email, Self.password).status == .ok)

            let submitted = try await client.postForm("/api/v1/auth/reset-password/form", ["token": token, "new_password": Self.newPassword])
            #expect(submitted.status == .ok)
            #expect(submitted.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(try await client.login(email, Self.password).status == .unauthorized)
            #expect(try await client.login(email, Self.newPassword).status == .ok)
        }
    }

    @Test func aResetByLinkRefusesTheAddressAsTheNewPassword() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            let token = try await Self.resetMail(email, client: client, server: server, peer: peer).token
            let refused = try await client.send(
                .post, "/api/v1/auth/reset-password/confirm", body: ResetPasswordConfirmRequest(token: token, newPassword: email.uppercased()))
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.reason == WeakPasswordReason.sameAsEmail.rawValue)
            #expect(try await client.login(email, Self.password).status == .ok)
        }
    }

    @Test func changingThePasswordNeedsTheCurrentOneAndEndsOnlyTheOtherSessions() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let caller = try await client.verifiedAccount(email, Self.password, peer: peer)
            let other = try await client.login(email, Self.password).decode(TokenPairResponse.self)
            let uri = "/api/v1/auth/change-password"

            let wrong = try await client.send(
                .post, uri, bearer: caller.accessToken,
                body: ChangePasswordRequest(currentPassword: "not the password at all", newPassword: Self.newPassword))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.envelope?.error.code == .invalidCredentials)

            let changed = try await client.send(
                .post, uri, bearer: caller.accessToken, body: ChangePasswordRequest(currentPassword: Self.password, newPassword: Self.newPassword))
            #expect(changed.status == .ok)
            #expect(
                try changed.decode(PasswordChangedResponse.self)
                    == PasswordChangedResponse(userID: caller.userID, revokedSessions: 1, revokedDevices: 0))
            try await expectAccepted(caller.accessToken, by: client)
            try await expectRefused(other.accessToken, by: client)
            #expect(try await client.login(email, Self.newPassword).status == .ok)
        }
    }
}
