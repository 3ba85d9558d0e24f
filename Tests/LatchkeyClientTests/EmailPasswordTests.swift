import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Email and password accounts through the SDK: what each call sends, what it does to the session, and the errors a
/// person reads.
@Suite struct EmailPasswordTests {
    static let emailUser = "5d1e7c2a-93b4-4f08-a6e1-0c7b2d9f4e38"

    static func path(_ route: String) -> String { "/api/v1/auth/\(route)" }

    static func account(_ email: String = "mystica@example.com", verified: Bool = false) -> TransportResponse {
        .json(verified ? 200 : 201, EmailAccountResponse(userID: Self.emailUser, email: email, emailVerified: verified))
    }

    // MARK: register

    @Test func registeringWithASessionInUseSendsItsBearerAndKeepsTheSession() async throws {
        let fixture = Fixture { _ in Self.account() }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()

        let account = try await session.register(email: "mystica@example.com", password: "correct horse")

        #expect(account == EmailAccountResponse(userID: Self.emailUser, email: "mystica@example.com", emailVerified: false))
        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("register")])
        #expect(sent.bearer == "access-1")
        let body = try #require(sent.jsonObject())
        #expect(Set(body.keys) == ["email", "password"])
        #expect(body["password"] as? String == "correct horse")
        #expect(try fixture.store.load() == stored)
    }

    @Test func registeringWithoutAttachingSendsNoBearer() async throws {
        let fixture = Fixture { _ in Self.account() }
        try fixture.storeSession()
        try await fixture.session().register(email: "mystica@example.com", password: "correct horse", attachToCurrentUser: false)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("register")])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    @Test func registeringWithoutASessionSendsNoBearer() async throws {
        let fixture = Fixture { _ in Self.account() }
        try await fixture.session().register(email: "mystica@example.com", password: "correct horse")
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("register")])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    /// A guest token or an access code is not a session the server attaches an address to: a new user is registered.
    @Test(arguments: [SessionKind.guest, .accessCode])
    func aGuestOrAccessCodeIsNotSentWhenRegistering(kind: SessionKind) async throws {
        let fixture = Fixture { _ in Self.account() }
        try fixture.storeSession(refresh: nil, kind: kind)
        try await fixture.session().register(email: "mystica@example.com", password: "correct horse")
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    @Test func aRefusedBearerIsRefreshedAndTheRegistrationSentAgainOnce() async throws {
        let fixture = Fixture { request in
            switch (request.url.path, request.bearer) {
            case ("/api/v1/auth/refresh", _): .json(200, Samples.pair(2))
            case (_, "access-2"): Self.account()
            default: .error(401, .invalidToken, "Token expired.")
            }
        }
        try fixture.storeSession()
        try await fixture.session().register(email: "mystica@example.com", password: "correct horse")
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("register"), Self.path("refresh"), Self.path("register")])
        #expect(fixture.transport.requests.last?.bearer == "access-2")
    }

    // MARK: verify

    @Test func theRegisteredAddressAsStoredIsUsedToVerifyTheCode() async throws {
        let fixture = Fixture { request in
            request.url.path == Self.path("register") ? Self.account() : Self.account(verified: true)
        }
        let session = fixture.session()
        try await session.register(email: " mystica@EXAMPLE.com", password: "correct horse")

        let verified = try await session.verifyEmail(code: " 731904 ")

        #expect(verified.emailVerified)
        let body = try #require(fixture.transport.requests(to: Self.path("verify-email")).first?.jsonObject())
        #expect(Set(body.keys) == ["email", "code"])
        #expect(body["email"] as? String == "mystica@example.com")
        #expect(body["code"] as? String == "731904")
    }

    @Test func verifyingACodeWithNoAddressRememberedSendsNothing() async throws {
        let fixture = Fixture { _ in Self.account(verified: true) }
        let error = await #expect(throws: LatchkeyError.self) { try await fixture.session().verifyEmail(code: "731904") }
        guard case .invalidRequest = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("verifyEmail(email:code:)") == true)
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aSignInRefusedAsUnverifiedRemembersTheAddressForTheCode() async throws {
        let fixture = Fixture { request in
            request.url.path == Self.path("login") ? .error(401, .emailNotVerified, "Verify the address first.") : Self.account(verified: true)
        }
        let session = fixture.session()
        #expect(await thrownCode { try await session.signIn(email: "mystica@example.com", password: "correct horse") } == .emailNotVerified)
        try await session.verifyEmail(code: "731904")
        let body = try #require(fixture.transport.requests(to: Self.path("verify-email")).first?.jsonObject())
        #expect(body["email"] as? String == "mystica@example.com")
    }

    @Test func verifyingWithTheLinkTokenSendsOnlyTheToken() async throws {
        let fixture = Fixture { _ in Self.account(verified: true) }
        try await fixture.session().verifyEmail(token: "link-token")
        let body = try #require(fixture.transport.requests.first?.jsonObject())
        #expect(body as? [String: String] == ["token": "link-token"])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    @Test func mailRequestsSendTheAddressOnly() async throws {
        let fixture = Fixture { _ in .json(202, MailAcceptedResponse(message: "If the address has an account, a mail is on its way.")) }
        let session = fixture.session()
        #expect(try await session.resendVerification(email: "mystica@example.com").message.contains("on its way"))
        try await session.requestPasswordReset(email: "mystica@example.com")
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("resend-verification"), Self.path("reset-password")])
        for request in fixture.transport.requests {
            #expect(request.jsonObject() as? [String: String] == ["email": "mystica@example.com"])
        }
    }

    // MARK: sign in

    @Test func signingInStoresTheSessionSoARelaunchIsSignedIn() async throws {
        let fixture = Fixture { request in
            request.url.path == Self.path("login")
                ? .json(200, Samples.pair(5, userID: Self.emailUser)) : Samples.me(accepting: ["access-5"], request)
        }
        let deviceID = try fixture.storeDevice(secret: nil)
        let session = fixture.session()

        let signedIn = try await session.signIn(email: "mystica@example.com", password: "correct horse")

        #expect(signedIn == AuthSession(userID: Self.emailUser, kind: .session, expiresAt: fixture.clock.now().addingTimeInterval(900)))
        #expect(await session.state == .signedIn(signedIn))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == Self.path("login"))
        #expect(sent.header("Authorization") == nil)
        #expect(sent.header("DPoP") != nil)  // proves the device key, as the other sign-ins do
        #expect(sent.jsonObject() as? [String: String] == ["email": "mystica@example.com", "password": "correct horse"])
        let stored = try #require(try fixture.store.load())
        #expect(stored.deviceID == deviceID)
        #expect(stored.session?.accessToken == "access-5")
        #expect(stored.session?.refreshToken == "refresh-5")
        #expect(await fixture.session().bootstrap() == .signedIn(signedIn))
    }

    @Test func signingInReplacesTheSessionInUse() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(5, userID: Self.emailUser)) }
        try fixture.storeSession()  // user "user"
        let session = fixture.session()
        let states = await session.authStates()
        try await session.signIn(email: "mystica@example.com", password: "correct horse")
        #expect(try fixture.store.load()?.session?.userID == Self.emailUser)
        var iterator = states.makeAsyncIterator()
        _ = await iterator.next()  // the state it started in
        #expect(await iterator.next() == .signedIn(AuthSession(userID: Self.emailUser, kind: .session, expiresAt: fixture.clock.now() + 900)))
    }

    @Test func aRefusedSignInKeepsTheSessionInUse() async throws {
        let fixture = Fixture { request in
            request.url.path == Self.path("login") ? .error(401, .invalidCredentials, "No.") : Samples.me(accepting: ["access-1"], request)
        }
        try fixture.storeSession()
        let session = fixture.session()
        let before = await session.bootstrap()
        let stored = try fixture.store.load()
        #expect(await thrownCode { try await session.signIn(email: "mystica@example.com", password: "wrong") } == .invalidCredentials)
        #expect(try fixture.store.load() == stored)
        #expect(await session.state == before)
        #expect(fixture.transport.requests(to: Self.path("refresh")).isEmpty)
    }

    // MARK: reset and change

    @Test func resettingThePasswordOfTheUserSignedInHereSignsOutAsRevoked() async throws {
        let fixture = Fixture { _ in .json(200, PasswordChangedResponse(userID: "USER", revokedSessions: 3)) }
        let deviceID = try fixture.storeSession()  // user "user"
        let session = fixture.session()
        _ = try await session.deviceID()
        let events = await session.events()

        let changed = try await session.resetPassword(token: "link-token", newPassword: "new horse battery")

        #expect(changed.revokedSessions == 3)
        #expect(await session.state == .signedOut(reason: .revoked))
        let stored = try #require(try fixture.store.load())
        #expect(stored.session == nil)
        #expect(stored.deviceID == deviceID)  // the device identity stays
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .signedOut(.revoked))
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.currentUser() }
    }

    @Test func resettingAnotherUsersPasswordKeepsTheSession() async throws {
        let fixture = Fixture { _ in .json(200, PasswordChangedResponse(userID: Self.emailUser, revokedSessions: 1)) }
        try fixture.storeSession()  // user "user"
        let stored = try fixture.store.load()
        let session = fixture.session()
        try await session.resetPassword(email: "other@example.com", code: "731904", newPassword: "new horse battery")
        #expect(try fixture.store.load() == stored)
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    @Test func resettingSendsTheTokenOrTheAddressAndCodeWithTheNewPassword() async throws {
        let fixture = Fixture { _ in .json(200, PasswordChangedResponse(userID: Self.emailUser, revokedSessions: 0)) }
        let session = fixture.session()
        try await session.resetPassword(token: "link-token", newPassword: "new horse battery")
        try await session.resetPassword(email: "mystica@example.com", code: "731904\n", newPassword: "new horse battery")
        let bodies = fixture.transport.requests(to: Self.path("reset-password/confirm")).map { $0.jsonObject() as? [String: String] }
        #expect(
            bodies == [
                ["token": "link-token", "new_password": "new horse battery"],
                ["email": "mystica@example.com", "code": "731904", "new_password": "new horse battery"],
            ])
    }

    @Test func changingThePasswordSendsTheBearerAndKeepsTheSession() async throws {
        let fixture = Fixture { _ in .json(200, PasswordChangedResponse(userID: "user", revokedSessions: 2)) }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()
        let changed = try await session.changePassword(current: "correct horse", new: "new horse battery")
        #expect(changed == PasswordChangedResponse(userID: "user", revokedSessions: 2))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == Self.path("change-password"))
        #expect(sent.bearer == "access-1")
        #expect(sent.jsonObject() as? [String: String] == ["current_password": "correct horse", "new_password": "new horse battery"])
        #expect(try fixture.store.load() == stored)
    }

    /// A 401 that refuses the current password is not a refused token: no refresh, no second try with the password.
    @Test func aWrongCurrentPasswordIsInvalidCredentialsWithoutARefresh() async throws {
        let fixture = Fixture { _ in .error(401, .invalidCredentials, "The current password is not right.") }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()
        #expect(await thrownCode { try await session.changePassword(current: "wrong", new: "new horse battery") } == .invalidCredentials)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path("change-password")])
        #expect(try fixture.store.load() == stored)
    }

    @Test func changingThePasswordSignedOutSendsNothing() async throws {
        let fixture = Fixture()
        await #expect(throws: LatchkeyError.notSignedIn) { try await fixture.session().changePassword(current: "a", new: "b") }
        #expect(fixture.transport.requests.isEmpty)
    }

    // MARK: errors

    /// Every email and password call makes the same error of the same refusal.
    static let calls: [(String, @Sendable (LatchkeySession) async throws -> Void)] = [
        ("register", { _ = try await $0.register(email: "mystica@example.com", password: "correct horse") }),
        ("signIn", { _ = try await $0.signIn(email: "mystica@example.com", password: "correct horse") }),
        ("verifyEmail", { _ = try await $0.verifyEmail(email: "mystica@example.com", code: "731904") }),
        ("resetPassword", { _ = try await $0.resetPassword(token: "link-token", newPassword: "new horse battery") }),
        ("changePassword", { _ = try await $0.changePassword(current: "correct horse", new: "new horse battery") }),
    ]

    @Test(arguments: EmailRefusal.all, calls.map(\.0))
    func aRefusalIsItsOwnError(refusal: EmailRefusal, call: String) async throws {
        let fixture = Fixture { _ in refusal.answer }
        try fixture.storeSession(lifetime: 3600)
        let error = await #expect(throws: LatchkeyError.self) { try await Self.calls.first { $0.0 == call }!.1(fixture.session()) }
        #expect(error == refusal.expected)
    }

    @Test func eachErrorHasItsCodeAndASentenceToRead() {
        for refusal in EmailRefusal.all {
            #expect(refusal.expected.code != nil, "\(refusal.name)")
            #expect(refusal.expected.description.hasSuffix("."), "\(refusal.expected.description)")
            #expect(refusal.expected.localizedDescription == refusal.expected.description)
        }
        #expect(LatchkeyError.refusal(401, .invalidCredentials, "Refused.").description == "The email or password is not right.")
        #expect(LatchkeyError.refusal(401, .emailNotVerified, "Refused.").description.hasPrefix("Please verify your email: "))
        #expect(EmailRefusal.tooManyAttempts(180).description.hasSuffix("Try again in 3 minutes."))
        #expect(EmailRefusal.tooManyAttempts(nil).description.hasSuffix("Try again later."))
    }

    @Test func eachWeakPasswordReasonSaysWhatToDo() {
        let advice: [WeakPasswordReason: String] = [
            .tooShort: "Use at least 8 characters.", .tooLong: "Use at most 256 characters.",
            .sameAsEmail: "Do not use your email address as your password.", .common: "harder to guess",
            WeakPasswordReason(rawValue: "a_rule_added_later"): "harder to guess",
        ]
        for (reason, words) in advice {
            #expect(EmailRefusal.weakPassword(reason).description.contains(words), "\(reason)")
        }
    }

    /// No answer is offline, never a wrong password: the app says "check your connection", not "wrong password".
    @Test(arguments: calls.map(\.0))
    func noAnswerIsOffline(call: String) async throws {
        let fixture = Fixture { _ in throw URLError(.notConnectedToInternet) }
        try fixture.storeSession(lifetime: 3600)
        let session = fixture.session()
        await #expect(throws: LatchkeyError.offline(.notConnectedToInternet)) { try await Self.calls.first { $0.0 == call }!.1(session) }
        #expect(await session.state != .signedOut(reason: .revoked))
        #expect(try fixture.store.load()?.session != nil)
    }

    /// `not_found` means "email is off" on the email routes only: elsewhere it stays a plain refusal.
    @Test func notFoundElsewhereIsStillARefusal() async throws {
        let fixture = Fixture { _ in .error(404, .notFound, "No such thing.") }
        await #expect(throws: LatchkeyError.refusal(404, .notFound, "No such thing.")) {
            try await fixture.session().send(.get("/api/v1/things/1", auth: .none))
        }
    }

    /// Passwords, codes, link tokens and the session's tokens appear in no error, request description or `dump`, even
    /// when the server's message echoes what it was sent.
    @Test func noPasswordCodeOrTokenAppearsInErrorsOrRequests() async throws {
        let secrets = ["correct horse", "new horse battery", "731904", "link-token-7", "access-1", "refresh-1", "access-2", "refresh-2"]
        let fixture = Fixture { request in
            let echoed = String(decoding: request.body ?? Data(), as: UTF8.self) + " " + (request.header("Authorization") ?? "")
            switch request.url.path {
            case Self.path("refresh"): return .json(200, Samples.pair(2))
            case Self.path("register"): return .error(400, .invalidEmail, "Not an address: \(echoed)")
            case Self.path("login"): return .error(400, .invalidRequest, "Bad body \(echoed)")
            case Self.path("verify-email"): return .error(500, .internalError, "Failed on \(echoed)")
            case Self.path("change-password"): return .error(401, .invalidToken, "Refused \(echoed)")
            default: return .error(422, ErrorCode(rawValue: "unprocessable"), "Cannot \(echoed)")
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        var errors: [any Error] = []
        let calls: [@Sendable () async throws -> Void] = [
            { _ = try await session.register(email: "mystica@example.com", password: "correct horse") },
            { _ = try await session.signIn(email: "mystica@example.com", password: "correct horse") },
            { _ = try await session.verifyEmail(email: "mystica@example.com", code: "731904") },
            { _ = try await session.verifyEmail(token: "link-token-7") },
            { _ = try await session.resetPassword(token: "link-token-7", newPassword: "new horse battery") },
            { _ = try await session.resetPassword(email: "mystica@example.com", code: "731904", newPassword: "new horse battery") },
            { _ = try await session.changePassword(current: "correct horse", new: "new horse battery") },
        ]
        for call in calls {
            do { try await call() } catch { errors.append(error) }
        }
        #expect(errors.count == calls.count)
        #expect(fixture.transport.requests(to: Self.path("change-password")).last?.bearer == "access-2")  // sent, and hidden below

        var texts: [String] = []
        for error in errors { texts += [String(describing: error), String(reflecting: error), error.localizedDescription] }
        for value in [fixture.transport.requests as Any, errors as Any, await session.state as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts += [String(describing: value), String(reflecting: value), dumped]
        }
        for text in texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) leaked in: \(text)") }
        }
    }
}

/// One refusal of the server, and the error the SDK makes of it.
struct EmailRefusal: Sendable, CustomTestStringConvertible {
    let name: String
    let answer: TransportResponse
    let expected: LatchkeyError
    var testDescription: String { self.name }

    static func envelope(_ status: Int, _ code: ErrorCode, reason: String? = nil, headers: [String: String] = [:]) -> TransportResponse {
        .json(status, ErrorEnvelope(code: code, message: "Refused.", reason: reason), headers: headers)
    }

    static func weakPassword(_ reason: WeakPasswordReason) -> LatchkeyError {
        .rejected(.init(status: 400, code: .weakPassword, message: "Refused.", weakPasswordReason: reason))
    }

    static func tooManyAttempts(_ retryAfter: TimeInterval?) -> LatchkeyError {
        .rejected(.init(status: 429, code: .tooManyAttempts, message: "Refused.", retryAfter: retryAfter))
    }

    static let all: [EmailRefusal] = [
        EmailRefusal(name: "too short", answer: envelope(400, .weakPassword, reason: "too_short"), expected: weakPassword(.tooShort)),
        EmailRefusal(name: "too long", answer: envelope(400, .weakPassword, reason: "too_long"), expected: weakPassword(.tooLong)),
        EmailRefusal(name: "same as email", answer: envelope(400, .weakPassword, reason: "same_as_email"), expected: weakPassword(.sameAsEmail)),
        EmailRefusal(name: "common", answer: envelope(400, .weakPassword, reason: "common"), expected: weakPassword(.common)),
        EmailRefusal(name: "invalid email", answer: envelope(400, .invalidEmail), expected: .refusal(400, .invalidEmail, "Refused.")),
        EmailRefusal(name: "email taken", answer: envelope(422, .emailTaken), expected: .refusal(422, .emailTaken, "Refused.")),
        EmailRefusal(name: "email already set", answer: envelope(409, .emailAlreadySet), expected: .refusal(409, .emailAlreadySet, "Refused.")),
        EmailRefusal(
            name: "no SMTP", answer: envelope(404, .notFound),
            expected: .refusal(404, .emailNotConfigured, "This server does not offer email and password sign-in.")),
        EmailRefusal(
            name: "invalid credentials", answer: envelope(401, .invalidCredentials), expected: .refusal(401, .invalidCredentials, "Refused.")),
        EmailRefusal(name: "not verified", answer: envelope(401, .emailNotVerified), expected: .refusal(401, .emailNotVerified, "Refused.")),
        EmailRefusal(name: "invalid code", answer: envelope(400, .invalidCode), expected: .refusal(400, .invalidCode, "Refused.")),
        EmailRefusal(
            name: "account locked", answer: envelope(429, .tooManyAttempts, headers: ["Retry-After": "120"]), expected: tooManyAttempts(120)),
        EmailRefusal(name: "account locked, no Retry-After", answer: envelope(429, .tooManyAttempts), expected: tooManyAttempts(nil)),
        EmailRefusal(
            name: "address rate limit", answer: envelope(429, .rateLimited, headers: ["Retry-After": "60"]),
            expected: .rateLimited(RateLimitInfo(retryAfter: 60))),
    ]
}
