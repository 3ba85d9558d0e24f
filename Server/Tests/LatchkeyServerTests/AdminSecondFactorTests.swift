import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Synchronization
import Testing

@testable import LatchkeyServer

/// The console's second factor, through a browser's view of it on a live socket and the manual clock: an admin without
/// a factor is held at the enrolment (a QR code as inline SVG, the key as text), sign-in asks for the code after the
/// password, a code and a recovery code are accepted once, wrong codes are limited, `latchkey admin mfa-reset` lets a
/// locked-out admin back in, and a user's page resets the user's factors.
@Suite
struct AdminSecondFactorTests {
    static let password = AdminConsoleTests.password
    static let enrolment = "/admin/account/second-factor"
    static let codePage = "/admin/sign-in/code"

    /// Sets the admin's password with a setup link, leaving them where the console sends them.
    static func setPassword(_ browser: ConsoleBrowser, _ server: TestServer) async throws -> TestResponse {
        let (_, token) = try await server.services.admin.createAccount(email: "ann@example.com")
        let page = try await browser.get("/admin/setup?token=\(token)")
        let fields = [("token", token), ("password", Self.password), ("password_confirm", Self.password)]
        return try await browser.post("/admin/setup", [("csrf", try ConsoleBrowser.csrf(in: page.text))] + fields)
    }

    /// Signs out and gives the password again, stopping where the console sends the admin next.
    static func signOutAndGiveThePassword(_ browser: ConsoleBrowser) async throws -> TestResponse {
        _ = try await browser.submit("/admin/logout", from: "/admin/account")
        let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
        return try await browser.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", Self.password)])
    }

    static func enterCode(_ browser: ConsoleBrowser, _ code: String) async throws -> TestResponse {
        try await browser.submit(Self.codePage, from: Self.codePage, [("code", code)])
    }

    @Test func anAdminWithoutAFactorIsHeldAtTheEnrolmentWhichShowsAQRCodeAndTheKey() async throws {
        try await AdminConsoleTests.withConsole { browser, client, server in
            let done = try await Self.setPassword(browser, server)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == Self.enrolment)
            let user = try await client.registerDevice().userID
            for page in AdminConsoleTests.pages + ["/admin/users/\(user)", "/admin/account", Self.codePage] {
                let response = try await browser.get(page)
                #expect(response.status == .seeOther, "\(page)")
                #expect(response.headers[.location] == Self.enrolment, "\(page)")
            }
            let page = try await browser.get(Self.enrolment)
            #expect(page.status == .ok)
            #expect(page.text.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            let secret = try ConsoleBrowser.secret(in: page.text)
            #expect(AuthenticatorApp.base32Decoded(secret).count * 8 >= 160)
            #expect(page.headers[.contentSecurityPolicy] == "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
            #expect(!page.text.contains("<script") && !page.text.contains("style="))
            #expect(page.text.contains("name=\"code\""))
            #expect(try await browser.get(Self.enrolment).text.contains(secret), "a reload shows the same key")
            // Actions are refused, even with the password entered again.
            let csrf = try ConsoleBrowser.csrf(in: page.text)
            #expect(try await browser.post("/admin/keys/rotate", [("csrf", csrf), ("password", Self.password)]).status == .forbidden)
            #expect(try await server.services.keyRing.records().count == 1)
            // Signing out works from there.
            #expect(try await browser.post("/admin/logout", [("csrf", csrf)]).headers[.location] == "/admin/login")
            #expect(try await browser.get(Self.enrolment).headers[.location] == "/admin/login")
        }
    }

    @Test func confirmingWithTheAppsCodeShowsTenRecoveryCodesOnceAndOpensTheConsole() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            _ = try await Self.setPassword(browser, server)
            let page = try await browser.get(Self.enrolment)
            let app = AuthenticatorApp(secret: try ConsoleBrowser.secret(in: page.text))
            let csrf = try ConsoleBrowser.csrf(in: page.text)
            let wrong = try await browser.post(Self.enrolment, [("csrf", csrf), ("code", "000000")])
            #expect(wrong.status == .badRequest)
            #expect(wrong.text.contains("class=\"flash error\""))
            #expect(wrong.text.contains(app.secret))
            #expect(try await browser.get("/admin").headers[.location] == Self.enrolment)

            let done = try await browser.post(Self.enrolment, [("csrf", csrf), ("code", app.code(at: server.clock.now()))])
            #expect(done.status == .ok)
            let codes = ConsoleBrowser.recoveryCodes(in: done.text)
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(try await browser.get("/admin").status == .ok)
            // Shown once: the enrolment is over, and no page shows them again.
            #expect(try await browser.get(Self.enrolment).headers[.location] == "/admin/account")
            #expect(!(try await browser.get("/admin/account").text.contains(codes[0])))
            let audit = try await server.services.audit.events(AuditQuery(action: "admin.mfa.enable"))
            #expect(audit.map(\.actor) == ["admin:ann@example.com"])
        }
    }

    @Test func signInAsksForTheCodeAfterThePasswordAndRefusesAWrongOne() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            let app = try #require(browser.app)
            let password = try await Self.signOutAndGiveThePassword(browser)
            #expect(password.status == .seeOther)
            #expect(password.headers[.location] == Self.codePage)
            for page in AdminConsoleTests.pages + ["/admin/account", Self.enrolment] {
                #expect(try await browser.get(page).headers[.location] == Self.codePage, "\(page)")
            }
            let form = try await browser.get(Self.codePage)
            #expect(form.status == .ok)
            #expect(form.text.contains("name=\"code\""))
            #expect(!form.text.contains("id=\"nav\""))

            server.clock.advance(by: 30)
            let wrong = try await Self.enterCode(browser, "123456" == app.code(at: server.clock.now()) ? "654321" : "123456")
            #expect(wrong.status == .badRequest)
            #expect(wrong.text.contains("class=\"flash error\""))
            #expect(try await browser.get("/admin").headers[.location] == Self.codePage)

            let right = try await Self.enterCode(browser, app.code(at: server.clock.now()))
            #expect(right.status == .seeOther)
            #expect(right.headers[.location] == "/admin")
            #expect(try await browser.get("/admin").status == .ok)
            let signIns = try await server.services.audit.events(AuditQuery(action: "admin.sign_in"))
            #expect(signIns.first?.details == "password and authenticator code")
        }
    }

    /// The code the enrolment was confirmed with, and each code a sign-in was finished with, are spent: the same step
    /// (or an older one within the skew) is refused, the next step's code works.
    @Test func aCodeIsAcceptedOnce() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            let app = try #require(browser.app)
            let enrolled = app.code(at: server.clock.now())
            _ = try await Self.signOutAndGiveThePassword(browser)
            #expect(try await Self.enterCode(browser, enrolled).status == .badRequest)

            server.clock.advance(by: 30)
            let next = app.code(at: server.clock.now())
            #expect(try await Self.enterCode(browser, next).headers[.location] == "/admin")

            _ = try await Self.signOutAndGiveThePassword(browser)
            #expect(try await Self.enterCode(browser, next).status == .badRequest)
            #expect(try await Self.enterCode(browser, enrolled).status == .badRequest)
            server.clock.advance(by: 30)
            #expect(try await Self.enterCode(browser, app.code(at: server.clock.now())).headers[.location] == "/admin")
        }
    }

    @Test func aRecoveryCodeWorksOnceInAnyCaseWithOrWithoutTheDash() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            _ = try await Self.setPassword(browser, server)
            let codes = try await browser.enrol(server)
            let code = try #require(codes.first)
            _ = try await Self.signOutAndGiveThePassword(browser)
            let used = try await Self.enterCode(browser, code.lowercased().replacingOccurrences(of: "-", with: ""))
            #expect(used.headers[.location] == "/admin?done=recovery-code-used")
            #expect(try await browser.get("/admin?done=recovery-code-used").text.contains("recovery code"))
            let signIn = try #require(try await server.services.audit.events(AuditQuery(action: "admin.sign_in")).first)
            #expect(signIn.details == "password and a recovery code (9 left)")

            _ = try await Self.signOutAndGiveThePassword(browser)
            #expect(try await Self.enterCode(browser, code).status == .badRequest)
            #expect(try await Self.enterCode(browser, codes[1]).headers[.location] == "/admin?done=recovery-code-used")
        }
    }

    /// Wrong codes count per admin as wrong passwords do per address (`limits.login-failures`, 10 in 15 minutes): then
    /// the right code too is held back (429) until the window has passed.
    @Test func wrongCodesAreLimited() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            let app = try #require(browser.app)
            _ = try await Self.signOutAndGiveThePassword(browser)
            server.clock.advance(by: 30)
            let wrong = app.code(at: server.clock.now()) == "111111" ? "222222" : "111111"
            for _ in 1...10 { #expect(try await Self.enterCode(browser, wrong).status == .badRequest) }
            let held = try await Self.enterCode(browser, app.code(at: server.clock.now()))
            #expect(held.status == .tooManyRequests)
            #expect(held.text.contains("Too many wrong codes"))
        }
    }

    @Test func aSignInWaitingForTheCodeEndsAfterFiveMinutes() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            _ = try await Self.signOutAndGiveThePassword(browser)
            server.clock.advance(by: 301)
            #expect(try await browser.get(Self.codePage).headers[.location] == "/admin/login")
        }
    }

    /// `latchkey admin mfa-reset` (run as a process) removes the admin's factor and recovery codes and ends their
    /// sessions: they sign in with the password only, and are held at the enrolment again.
    @Test func mfaResetLetsALockedOutAdminInWithThePasswordAndHoldsThemAtTheEnrolment() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            _ = try await Self.setPassword(browser, server)
            #expect(try await browser.enrol(server).count == 10)
            #expect(try await AccountCLITests.cli(server, "admin", "list").stdout.contains("ann@example.com\tactive\ttotp\t"))
            let reset = try await AccountCLITests.cli(server, "admin", "mfa-reset", "ann@example.com")
            #expect(reset.exitCode == 0, "\(reset)")
            #expect(try await AccountCLITests.cli(server, "admin", "list").stdout.contains("ann@example.com\tactive\tnone\t"))
            #expect(try await browser.get("/admin").headers[.location] == "/admin/login")

            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            let signIn = try await browser.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", Self.password)])
            #expect(signIn.headers[.location] == Self.enrolment)
            #expect(try await browser.get("/admin").headers[.location] == Self.enrolment)
            #expect(try await server.services.store.unusedAdminRecoveryCodes(adminID: try #require(browser.adminID(server))) == nil)
            let audit = try await server.services.audit.events(AuditQuery(action: "admin.mfa.reset"))
            #expect(audit.map(\.target) == ["admin ann@example.com"])

            let unknown = try await AccountCLITests.cli(server, "admin", "mfa-reset", "bob@example.com")
            #expect(unknown.exitCode != 0)
        }
    }

    /// `keys rotate-master` re-seals an admin's secret with the others, under its own sealing context.
    @Test func rotatingTheMasterKeyResealsAdminSecrets() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            let id = try #require(try await browser.adminID(server))
            let contexts = Mutex<[String]>([])
            let resealed = try await server.services.store.resealSecrets { sealed, context in
                contexts.withLock { $0.append(context) }
                return sealed
            }
            #expect(resealed.adminTOTPSecrets == 1)
            #expect(contexts.withLock { $0.contains("admin totp secret \(id)") })
        }
    }

    /// A new setup link (a forgotten password) does not skip the second factor: after the new password comes the code,
    /// and the sign-in is audited only once it is given.
    @Test func aNewSetupLinkKeepsTheSecondFactor() async throws {
        try await AdminConsoleTests.withConsole { browser, _, server in
            try await browser.setUp(server)
            let done = try await Self.setPassword(browser, server)
            #expect(done.headers[.location] == Self.codePage)
            #expect(try await browser.get("/admin").headers[.location] == Self.codePage)
            #expect(try await server.services.audit.events(AuditQuery(action: "admin.sign_in")).count == 1)
        }
    }

    @Test func withRequireMFAOffAnAdminWithoutAFactorUsesTheConsoleAndMayEnrolFromTheAccountPage() async throws {
        try await AdminConsoleTests.withConsole({ $0.admin.requireMFA = false }) { browser, _, server in
            let done = try await Self.setPassword(browser, server)
            #expect(done.headers[.location] == "/admin")
            #expect(try await browser.get("/admin").status == .ok)
            let account = try await browser.get("/admin/account")
            #expect(account.text.contains("id=\"enrol-second-factor\""))
            try await browser.enrol(server)
            let password = try await Self.signOutAndGiveThePassword(browser)
            #expect(password.headers[.location] == Self.codePage)
        }
    }

    /// A user's page says whether the user has a factor; its reset button (a CSRF form) removes the factors and
    /// recovery codes, keeps the sessions and is audited.
    @Test func theUserPagesResetButtonRemovesTheUsersFactors() async throws {
        try await AdminConsoleTests.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let enrolled = try await client.send(.post, "/api/v1/mfa/totp", bearer: device.accessToken)
            #expect(enrolled.status == .created)
            let factor = try enrolled.decode(TOTPEnrollmentResponse.self)
            let code = AuthenticatorApp(secret: factor.secret).code(at: server.clock.now())
            let confirmed = try await client.send(
                .post, "/api/v1/mfa/totp/\(factor.factorID)/confirm", bearer: device.accessToken, json: #"{"code": "\#(code)"}"#)
            #expect(confirmed.status == .ok)

            let userPage = "/admin/users/\(device.userID)"
            let page = try await browser.get(userPage)
            #expect(page.text.contains("<td>totp</td><td>confirmed</td>"))
            #expect(page.text.contains("id=\"reset-second-factors\""))
            #expect(try await browser.post("\(userPage)/second-factors/reset", [("csrf", "forged")]).status == .forbidden)
            #expect(try await server.services.secondFactors.factors(userID: device.userID).factors.count == 1)

            let reset = try await browser.submit("\(userPage)/second-factors/reset", from: userPage)
            #expect(reset.headers[.location] == "\(userPage)?done=second-factors-reset")
            #expect(try await server.services.secondFactors.factors(userID: device.userID).factors.isEmpty)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .ok)
            let after = try await browser.get(userPage)
            #expect(!after.text.contains("id=\"reset-second-factors\""))
            let audit = try await server.services.audit.events(AuditQuery(action: "user.mfa.reset"))
            #expect(audit.map(\.actor) == ["admin:ann@example.com"])
            #expect(audit.first?.target == "user \(device.userID)")
        }
    }
}

extension ConsoleBrowser {
    /// The ID of the admin account of `email`.
    func adminID(_ server: TestServer, email: String = "ann@example.com") async throws -> String? {
        try await server.services.admin.accounts().first { $0.email == email }?.id
    }
}
