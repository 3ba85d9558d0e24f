import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Email and password accounts through the SDK, against a live server that mails through a local SMTP peer: seed 002
/// (Mystica) adds an email account to its device user, and every refusal a person can meet on the way.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct EmailPasswordEndToEndTests {
    // MARK: A server that mails, and its mails

    /// Runs `body` against a fresh live server that sends mail.
    static func withMailingServer(_ body: @Sendable (LiveServer) async throws -> Void) async throws {
        try await LiveServer.start(email: true, body)
    }

    /// The newest mail to `address` that the SMTP peer received.
    static func latestMail(to address: String) async throws -> Mail {
        let message = try await MailPeer.latestMessage(to: address)
        return Mail(code: message.code, linkToken: message.linkToken)
    }

    // MARK: Mystica's checklist

    /// Register the device → add an email and password to its user → verify with the mailed code → a relaunch is
    /// signed in as the same user → sign out → sign in with the password → forgot it: reset through the mailed link
    /// (the session here ends as revoked) → the old password is refused, the new one signs in as the same user.
    @Test func mysticaAddsAnEmailAccountToItsDeviceUserAndResetsItsPassword() async throws {
        try await Self.withMailingServer { server in
            let email = Self.address("mystica")
            let app = AppInstall(server: server)
            let first = app.launch()
            #expect(await first.bootstrap() == .signedOut())
            let device = try await first.registerDevice()

            let registered = try await first.register(email: email, password: "correct horse battery")
            #expect(registered == EmailAccountResponse(userID: device.userID, email: email, emailVerified: false))
            #expect(await first.state.isSignedIn)  // attaching keeps the device session

            let verification = try await Self.newMail(to: email)
            let verified = try await first.verifyEmail(code: verification.code)
            #expect(verified == EmailAccountResponse(userID: device.userID, email: email, emailVerified: true))

            let relaunched = app.launch()
            let restored = await relaunched.bootstrap()
            guard case .signedIn(let restoredSession) = restored else {
                Issue.record("the relaunch is \(restored), not signed in")
                return
            }
            #expect(restoredSession.userID == device.userID)
            #expect(try await relaunched.currentUser().userID == device.userID)

            try await relaunched.signOut()
            let signedOut = app.launch()
            #expect(await signedOut.bootstrap() == .signedOut())
            let signedIn = try await signedOut.signIn(email: email, password: "correct horse battery")
            #expect(signedIn.userID == device.userID)
            #expect(await app.launch().bootstrap().isSignedIn)  // stored: the next launch is signed in
            let tokenBeforeReset = try #require(try app.store.load()?.session?.accessToken)

            app.advance(by: 61)  // the server mails one address at most once a minute
            try await signedOut.requestPasswordReset(email: email)
            let reset = try await Self.newMail(to: email, after: verification)
            let changed = try await signedOut.resetPassword(token: reset.linkToken, newPassword: "new horse battery staple")
            #expect(changed.userID == device.userID)
            #expect(changed.revokedSessions >= 1)
            #expect(await signedOut.state == .signedOut(reason: .revoked))
            #expect(try app.store.load()?.session == nil)
            // Dead on the server too.
            #expect(try await Self.validateToken(tokenBeforeReset, on: server) == 401)

            await expectRefusal(.invalidCredentials) { try await signedOut.signIn(email: email, password: "correct horse battery") }
            #expect(try await signedOut.signIn(email: email, password: "new horse battery staple").userID == device.userID)
        }
    }

    // MARK: Refusals

    @Test func weakPasswordsAreRefusedWithTheirReason() async throws {
        try await Self.withMailingServer { server in
            let session = AppInstall(server: server).launch()
            let email = Self.address("weak")
            let cases: [(String, WeakPasswordReason)] = [
                ("short", .tooShort), (String(repeating: "x", count: 257), .tooLong), (email, .sameAsEmail), ("password", .common),
            ]
            for (password, reason) in cases {
                await expectRefusal(.weakPassword, reason: reason) { try await session.register(email: email, password: password) }
            }
        }
    }

    /// Where the server reveals existing accounts (`email.reveal-existing`), a verified address of another account is
    /// ``LatchkeyError/emailTaken``; elsewhere the registration answers as any other (no enumeration).
    @Test func anAddressOfAnotherAccountIsTaken() async throws {
        try await LiveServer.start(email: true, revealExisting: true) { server in
            let email = Self.address("taken")
            let owner = AppInstall(server: server).launch()
            try await owner.register(email: email, password: "correct horse battery")
            try await owner.verifyEmail(code: try await Self.newMail(to: email).code)
            let other = AppInstall(server: server).launch()
            try await other.registerDevice()
            await expectRefusal(.emailTaken) { try await other.register(email: email, password: "another horse battery") }
            await expectRefusal(.emailTaken) {
                try await other.register(email: email, password: "another horse battery", attachToCurrentUser: false)
            }
        }
    }

    @Test func aUserWithAnAddressCannotAttachAnother() async throws {
        try await Self.withMailingServer { server in
            let session = AppInstall(server: server).launch()
            try await session.registerDevice()
            try await session.register(email: Self.address("first"), password: "correct horse battery")
            await expectRefusal(.emailAlreadySet) {
                try await session.register(email: Self.address("second"), password: "correct horse battery")
            }
        }
    }

    @Test func aWrongPasswordIsInvalidCredentialsAndKeepsTheSessionInUse() async throws {
        try await Self.withMailingServer { server in
            let email = Self.address("wrong")
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            try await session.register(email: email, password: "correct horse battery")
            try await session.verifyEmail(code: try await Self.newMail(to: email).code)
            let stored = try app.store.load()

            await expectRefusal(.invalidCredentials) { try await session.signIn(email: email, password: "not my password") }
            await expectRefusal(.invalidCredentials) {
                try await session.signIn(email: Self.address("nobody"), password: "not my password")
            }
            #expect(try app.store.load() == stored)
            #expect(await session.state.isSignedIn)
        }
    }

    /// Ten wrong passwords lock the account for a while: then even the right one is refused, with how long to wait.
    @Test func tooManyWrongPasswordsLockTheAccountForAWhile() async throws {
        try await Self.withMailingServer { server in
            let email = Self.address("locked")
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.register(email: email, password: "correct horse battery")
            try await session.verifyEmail(code: try await Self.newMail(to: email).code)
            for _ in 0..<10 {
                await expectRefusal(.invalidCredentials) { try await session.signIn(email: email, password: "not my password") }
            }
            let error = await #expect(throws: LatchkeyError.self) { try await session.signIn(email: email, password: "correct horse battery") }
            guard case .rejected(let details) = error, details.code == .tooManyAttempts, let retryAfter = details.retryAfter else {
                Issue.record("expected tooManyAttempts with a Retry-After, got \(String(describing: error))")
                return
            }
            #expect(retryAfter > 5 && retryAfter <= 900)
            app.advance(by: retryAfter + 1)
            #expect(try await session.signIn(email: email, password: "correct horse battery").kind == .session)
        }
    }

    /// A new user (no session to attach to) cannot sign in before verifying; the refused sign-in remembers the address,
    /// so the code alone verifies it.
    @Test func anUnverifiedAddressCannotSignInUntilItsCodeIsEntered() async throws {
        try await Self.withMailingServer { server in
            let email = Self.address("unverified")
            let registered = try await AppInstall(server: server).launch().register(email: email, password: "correct horse battery")
            #expect(registered.emailVerified == false)

            let session = AppInstall(server: server).launch()
            await expectRefusal(.emailNotVerified) { try await session.signIn(email: email, password: "correct horse battery") }
            #expect(await session.state.isSignedIn == false)
            await expectRefusal(.invalidCode) { try await session.verifyEmail(code: "000000") }

            try await session.verifyEmail(code: try await Self.newMail(to: email).code)
            #expect(try await session.signIn(email: email, password: "correct horse battery").userID == registered.userID)
        }
    }

    @Test func changingThePasswordKeepsThisSessionAndEndsTheOthers() async throws {
        try await Self.withMailingServer { server in
            let email = Self.address("change")
            let phone = AppInstall(server: server)
            let session = phone.launch()
            try await session.registerDevice()
            try await session.register(email: email, password: "correct horse battery")
            try await session.verifyEmail(code: try await Self.newMail(to: email).code)
            let tablet = AppInstall(server: server)
            try await tablet.launch().signIn(email: email, password: "correct horse battery")
            let tabletToken = try #require(try tablet.store.load()?.session?.accessToken)

            await expectRefusal(.invalidCredentials) {
                try await session.changePassword(current: "wrong", new: "new horse battery staple")
            }
            let changed = try await session.changePassword(current: "correct horse battery", new: "new horse battery staple")

            #expect(changed.revokedSessions >= 1)
            #expect(try await session.currentUser().userID == changed.userID)
            #expect(try await Self.validateToken(tabletToken, on: server) == 401)
            #expect(try await tablet.launch().signIn(email: email, password: "new horse battery staple").userID == changed.userID)
        }
    }

    /// Without SMTP the email routes are off: a clear error, not a bare 404.
    @Test func aServerThatSendsNoMailSaysEmailIsNotConfigured() async throws {
        try await LiveServer.run { server in
            let session = AppInstall(server: server).launch()
            await expectRefusal(.emailNotConfigured) {
                try await session.register(email: Self.address("off"), password: "correct horse battery")
            }
            await expectRefusal(.emailNotConfigured) { try await session.signIn(email: Self.address("off"), password: "x") }
        }
    }
}

// MARK: - Helpers

/// The code and link token of one mail.
struct Mail: Equatable, Sendable {
    var code: String
    var linkToken: String
}

extension EmailPasswordEndToEndTests {
    /// An address no other test uses.
    static func address(_ name: String) -> String { "\(name)+\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// The newest mail to `address` other than `previous`, once it has arrived: the server sends mail from its outbox on
    /// its own time. Waits 10 seconds at most.
    static func newMail(to address: String, after previous: Mail? = nil) async throws -> Mail {
        for _ in 0..<200 {
            if let mail = try? await Self.latestMail(to: address), mail != previous { return mail }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw MailNotReceived(address: address)
    }

    struct MailNotReceived: Error, CustomStringConvertible {
        let address: String
        var description: String { "no new mail to \(self.address) within 10 seconds" }
    }

    /// The status of `GET /api/v1/validate-token` with `token`: 200 while the server accepts it.
    static func validateToken(_ token: String, on server: LiveServer) async throws -> Int {
        let request = TransportRequest(
            method: "GET", url: server.url.appendingPathComponent("api/v1/validate-token"), headers: ["Authorization": "Bearer \(token)"])
        return try await URLSessionTransport().send(request).status
    }
}
