import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Email and password accounts over a live socket, mailing through the SMTP peer: registration, attaching to a device
/// user, addresses, password rules and signing in before and after verification.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct EmailAccountTests {
    static let password = "correct horse battery staple"

    @Test func registeringWithoutABearerCreatesAnUnverifiedUserAndMailsACodeThatVerifiesOnce() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let registered = try await client.register(email, Self.password)
            #expect(registered.status == .created)
            let account = try registered.decode(EmailAccountResponse.self)
            #expect(account.email == email && !account.emailVerified)
            #expect(UUID(uuidString: account.userID) != nil)

            let mail = try await peer.mail(to: email)
            #expect(mail.message.headers["from"]?.hasSuffix("<no-reply@latchkey.test>") == true)
            #expect(EncodedWordDecoder.decode(mail.message.headers["subject"] ?? "") == "Your Latchkey verification code: \(mail.code)")
            #expect(mail.message.headers["message-id"]?.hasSuffix("@latchkey.test>") == true)
            #expect(mail.message.headers["date"] != nil)
            #expect(mail.message.headers["content-type"]?.hasPrefix("multipart/alternative") == true)
            #expect(mail.html.contains(mail.code) && mail.html.contains("token=\(mail.token)"))

            let verified = try await client.verify(email, code: mail.code)
            #expect(verified.status == .ok)
            #expect(try verified.decode(EmailAccountResponse.self) == EmailAccountResponse(userID: account.userID, email: email, emailVerified: true))
            let again = try await client.verify(email, code: mail.code)
            #expect(again.status == .badRequest)
            #expect(again.envelope?.error.code == .invalidCode)
        }
    }

    @Test func signingInNeedsTheAddressVerifiedAndGivesASessionOfTheSameUser() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let account = try await client.register(email, Self.password).decode(EmailAccountResponse.self)
            let early = try await client.login(email, Self.password)
            #expect(early.status == .unauthorized)
            #expect(early.envelope?.error.code == .emailNotVerified)

            #expect(try await client.verify(email, code: try await peer.mail(to: email).code).status == .ok)
            let signedIn = try await client.login(email, Self.password)
            #expect(signedIn.status == .ok)
            let session = try signedIn.decode(TokenPairResponse.self)
            #expect(session.userID == account.userID)
            let profile = try await client.me(session.accessToken)
            #expect(profile.status == .ok)
            #expect(try profile.decode(UserProfile.self).userID == account.userID)
        }
    }

    @Test func registeringWithADeviceSessionAttachesTheAddressToThatUser() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let email = newAddress()
            let registered = try await client.register(email, Self.password, bearer: device.accessToken)
            #expect(registered.status == .created)
            #expect(try registered.decode(EmailAccountResponse.self).userID == device.userID)

            #expect(try await client.verify(email, code: try await peer.mail(to: email).code).status == .ok)
            let session = try await client.login(email, Self.password).decode(TokenPairResponse.self)
            #expect(session.userID == device.userID)
            #expect(try await client.me(session.accessToken).decode(UserProfile.self).userID == device.userID)
        }
    }

    @Test func aUserHasOneAddressAndAVerifiedAddressOneUserIgnoringCase() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make {
            $0.useMailPeer(peer)
            $0.email.revealExisting = true
        }
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let email = newAddress()
            #expect(try await client.register(email, Self.password, bearer: device.accessToken).status == .created)

            let second = try await client.register(newAddress(), Self.password, bearer: device.accessToken)
            #expect(second.status == .conflict)
            #expect(second.envelope?.error.code == .emailAlreadySet)

            // Unverified, the address is nobody's yet; verified, it is taken (told only with email.reveal-existing).
            #expect(try await client.verify(email, code: try await peer.mail(to: email).code).status == .ok)
            let other = try await client.registerDevice()
            let taken = try await client.register(email.uppercased(), Self.password, bearer: other.accessToken)
            #expect(taken.status == .unprocessableContent)
            #expect(taken.envelope?.error.code == .emailTaken)
        }
    }

    @Test func addressesAreTrimmedAndTheirDomainLowercasedInPunycode() async throws {
        try await withMailServer { client, server, peer in
            let tag = UUID().uuidString.prefix(8).lowercased()
            let registered = try await client.register("  Ann.Lee+\(tag)@BÜCHER.example ", Self.password)
            #expect(registered.status == .created)
            #expect(try registered.decode(EmailAccountResponse.self).email == "Ann.Lee+\(tag)@xn--bcher-kva.example")
        }
    }

    @Test(arguments: ["no-at-sign", "a@b", "a..b@example.com", "a@[1.2.3.4]", "ü@example.com"])
    func malformedAddressesAreRefusedAndCreateNothing(address: String) async throws {
        try await withMailServer { client, server, peer in
            let refused = try await client.register(address, Self.password)
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .invalidEmail)
            #expect(try await client.login(address, Self.password).envelope?.error.code == .invalidCredentials)
            #expect(try await server.services.store.outbox(limit: 10, pendingOnly: false).isEmpty)
        }
    }

    @Test(arguments: [
        ("short1", WeakPasswordReason.tooShort), ("password123", .common), ("ｐａｓｓｗｏｒｄ１２３", .common), ("{email}", .sameAsEmail),
        (String(repeating: "x", count: 257), .tooLong),
    ])
    func weakPasswordsAreRefusedWithTheirReason(password: String, reason: WeakPasswordReason) async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let refused = try await client.register(email, password.replacingOccurrences(of: "{email}", with: email))
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .weakPassword)
            #expect(refused.envelope?.error.reason == reason.rawValue)
        }
    }

    @Test func aPasswordIsOneWhetherTypedInFullWidthOrASCII() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, "ｃｏｒｒｅｃｔ\u{3000}ｈｏｒｓｅ\u{3000}ｂａｔｔｅｒｙ", peer: peer)
            #expect(try await client.login(email, "correct horse battery").status == .ok)
        }
    }

    @Test func theMailedLinkOpensAPageAndOnlyItsButtonVerifies() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let token = try await peer.mail(to: email).token

            let page = try await client.send(.get, "/api/v1/auth/verify-email?token=\(token)")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(page.text.contains(#"action="verify-email/form""#))
            #expect(try await client.login(email, Self.password).envelope?.error.code == .emailNotVerified)

            // A form that is not well formed (the token given twice) is not read: the page says so and nothing is verified.
            let doubled = try await client.postForm("/api/v1/auth/verify-email/form", ["token": "forged", "token": token])
            #expect(doubled.status == .badRequest)
            #expect(doubled.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(try await client.login(email, Self.password).envelope?.error.code == .emailNotVerified)

            let pressed = try await client.postForm("/api/v1/auth/verify-email/form", ["token": token])
            #expect(pressed.status == .ok)
            #expect(pressed.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(try await client.login(email, Self.password).status == .ok)

            let again = try await client.postForm("/api/v1/auth/verify-email/form", ["token": token])
            #expect(again.status == .badRequest)
            #expect(again.headers[.contentType]?.hasPrefix("text/html") == true)
        }
    }

    @Test func theLinkTokenVerifiesAsJSONToo() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let token = try await peer.mail(to: email).token
            let verified = try await client.send(.post, "/api/v1/auth/verify-email", body: VerifyEmailRequest(token: token))
            #expect(verified.status == .ok)
            #expect(try verified.decode(EmailAccountResponse.self).emailVerified)
        }
    }

    @Test func fiveWrongCodesSpendTheCode() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let code = try await peer.mail(to: email).code
            let wrong = String(format: "%06d", (Int(code)! + 1) % 1_000_000)
            for _ in 1...5 { #expect(try await client.verify(email, code: wrong).envelope?.error.code == .invalidCode) }
            let spent = try await client.verify(email, code: code)
            #expect(spent.status == .badRequest)
            #expect(spent.envelope?.error.code == .invalidCode)
        }
    }

    @Test func aCodeExpiresAfterFifteenMinutes() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let code = try await peer.mail(to: email).code
            server.clock.advance(by: 15 * 60 + 1)
            let expired = try await client.verify(email, code: code)
            #expect(expired.status == .badRequest)
            #expect(expired.envelope?.error.code == .invalidCode)
        }
    }
}
