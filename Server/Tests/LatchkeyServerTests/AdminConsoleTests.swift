import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import NIOCore
import Testing

@testable import LatchkeyServer

/// A browser's view of the console over a live socket: it keeps the cookies the server sets and reads each page's CSRF
/// token, as a browser submitting the page's forms does.
final class ConsoleBrowser: @unchecked Sendable {
    let client: any TestClientProtocol
    var cookies: [String: String] = [:]
    /// The authenticator app ``enrol(_:)`` set up.
    var app: AuthenticatorApp?

    init(_ client: any TestClientProtocol) { self.client = client }

    @discardableResult
    func get(_ uri: String) async throws -> TestResponse {
        let response = try await self.client.execute(uri: uri, method: .get, headers: self.cookieHeader, body: nil)
        self.keep(response)
        return response
    }

    @discardableResult
    func post(_ uri: String, _ fields: [(String, String)]) async throws -> TestResponse {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        var headers = self.cookieHeader
        headers[.contentType] = "application/x-www-form-urlencoded"
        let response = try await self.client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
        self.keep(response)
        return response
    }

    /// Posts `fields` with the CSRF token of the page at `page`.
    @discardableResult
    func submit(_ uri: String, from page: String, _ fields: [(String, String)] = []) async throws -> TestResponse {
        let csrf = try Self.csrf(in: try await self.get(page).text)
        return try await self.post(uri, [("csrf", csrf)] + fields)
    }

    static func csrf(in html: String) throws -> String {
        String(try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/)?.output.1))
    }

    /// Sets up the admin with a setup link and signs in, enrolling an authenticator app when the console sends it there
    /// (`admin.require-mfa`); returns the session cookie's Set-Cookie line. The account has `role` (an owner unless told).
    @discardableResult
    func setUp(
        _ server: TestServer, email: String = "ann@example.com", password: String = "a long admin passphrase", role: AdminRole = .owner
    ) async throws -> String {
        let (_, token) = try await server.services.admin.createAccount(email: email, role: role)
        let done = try await self.setUp(server, token: token, password: password)
        return try #require(done.headers[values: .setCookie].first { $0.hasPrefix("latchkey_admin=") })
    }

    /// Sets up the admin of a setup `token` (printed by `latchkey admin create`) and signs in, enrolling when the console
    /// asks; returns the setup form's answer (its Set-Cookie starts the session).
    @discardableResult
    func setUp(_ server: TestServer, token: String, password: String = "a long admin passphrase") async throws -> TestResponse {
        let page = try await self.get("/admin/setup?token=\(token)")
        let done = try await self.post(
            "/admin/setup", [("csrf", try Self.csrf(in: page.text)), ("token", token), ("password", password), ("password_confirm", password)])
        guard done.status == .seeOther else { throw TestFailure("setup answered \(done.status): \(done.text)") }
        if done.headers[.location] == "/admin/account/second-factor" { try await self.enrol(server) }
        guard try await self.get("/admin").status == .ok else { throw TestFailure("not signed in after the setup") }
        return done
    }

    /// Enrols on the enrolment page: reads the key from its `<code>`, confirms with the app's code now; returns the
    /// recovery codes shown.
    @discardableResult
    func enrol(_ server: TestServer) async throws -> [String] {
        let page = try await self.get("/admin/account/second-factor")
        let app = AuthenticatorApp(secret: try Self.secret(in: page.text))
        self.app = app
        let done = try await self.post(
            "/admin/account/second-factor", [("csrf", try Self.csrf(in: page.text)), ("code", app.code(at: server.clock.now()))])
        guard done.status == .ok else { throw TestFailure("confirming answered \(done.status): \(done.text)") }
        return Self.recoveryCodes(in: done.text)
    }

    /// Signs in with the password and, when asked, the app's code of the next step (the last was spent).
    @discardableResult
    func signIn(_ server: TestServer, email: String = "ann@example.com", password: String = "a long admin passphrase") async throws -> TestResponse {
        let csrf = try Self.csrf(in: try await self.get("/admin/login").text)
        let answer = try await self.post("/admin/login", [("csrf", csrf), ("email", email), ("password", password)])
        guard answer.headers[.location] == "/admin/sign-in/code", let app = self.app else { return answer }
        server.clock.advance(by: 30)
        return try await self.submit("/admin/sign-in/code", from: "/admin/sign-in/code", [("code", app.code(at: server.clock.now()))])
    }

    static func secret(in html: String) throws -> String {
        String(try #require(html.firstMatch(of: /<code id="totp-secret"[^>]*>([A-Z2-7]+)<\/code>/)?.output.1))
    }

    static func recoveryCodes(in html: String) -> [String] {
        html.matches(of: /<li><code>([A-Z2-7]{5}-[A-Z2-7]{5})<\/code><\/li>/).map { String($0.output.1) }
    }

    private var cookieHeader: HTTPFields {
        guard !self.cookies.isEmpty else { return [:] }
        return [.cookie: self.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    private func keep(_ response: TestResponse) {
        for line in response.headers[values: .setCookie] {
            let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let (name, value) = (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
            if value.isEmpty || line.contains("Max-Age=0") { self.cookies[name] = nil } else { self.cookies[name] = value }
        }
    }
}

/// The admin console's routes: sign-in, CSRF, cookies and headers, every page behind a session, HTML escaping, and
/// actions that act everywhere (through the same services as the API and CLI) and are audited.
@Suite
struct AdminConsoleTests {
    static func withConsole(
        clock: ManualClock = ManualClock(), _ configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (ConsoleBrowser, any TestClientProtocol, TestServer) async throws -> Void
    ) async throws {
        let server = try await TestServer.make(clock: clock) { configuration in
            configuration.admin.enabled = true
            configuration.email.argon2Memory = 64
            configuration.email.argon2Iterations = 1
            configure(&configuration)
        }
        try await server.test(.live) { client in try await body(ConsoleBrowser(client), client, server) }
    }

    static let pages = ["/admin", "/admin/users", "/admin/access-codes", "/admin/keys", "/admin/webhooks", "/admin/audit", "/admin/admins"]

    /// The password ``ConsoleBrowser/setUp(_:email:password:)`` sets.
    static let password = "a long admin passphrase"

    @Test func theConsoleIsOffUnlessEnabled() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client async throws in
            let browser = ConsoleBrowser(client)
            #expect(try await browser.get("/admin").status == .notFound)
            #expect(try await browser.get("/admin/login").status == .notFound)
        }
    }

    /// With `admin.port`, `latchkey serve` answers the console on that port only, and the setup link of a CLI with the same
    /// settings points there.
    @Test func adminPortServesTheConsoleApartFromTheAPI() async throws {
        let (port, adminPort) = (try ServeCommandTests.freePort(), try ServeCommandTests.freePort())
        let server = try await ServeCommandTests.start(
            ["serve", "--port", String(port)], environment: ["LATCHKEY_ADMIN_ENABLED": "true", "LATCHKEY_ADMIN_PORT": String(adminPort)], port: port)
        let console = ServeCommandTests.ServerProcess(pid: server.pid, port: adminPort, directory: server.directory)
        #expect(try await console.get("admin/login").0 == 200)
        #expect(try await server.get("admin/login").0 == 404)
        #expect(try await console.get("api/v1/health").0 == 404)
        let create = try await LatchkeyCLI.run(
            ["admin", "create", "ann@example.com", "--database", server.directory.appendingPathComponent("latchkey.sqlite").path],
            masterKey: try String(contentsOf: server.directory.appendingPathComponent("latchkey.sqlite.key"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines),
            workingDirectory: server.directory, environment: ["LATCHKEY_ADMIN_ENABLED": "true", "LATCHKEY_ADMIN_PORT": String(adminPort)])
        #expect(create.exitCode == 0, "\(create)")
        #expect(create.stdout.hasPrefix("http://127.0.0.1:\(adminPort)/admin/setup?token="), "\(create)")
        #expect(await server.terminate() == 0, "log:\n\(server.log)")
    }

    @Test func everyPageNeedsASessionAndEveryActionIsRefusedWithoutOne() async throws {
        try await Self.withConsole { browser, client, server in
            let device = try await client.registerDevice()
            let user = device.userID
            for page in Self.pages + [
                "/admin/users/\(user)", "/admin/users/\(user)/delete", "/admin/account", "/admin/account/second-factor", "/admin/sign-in/code",
            ] {
                let response = try await browser.get(page)
                #expect(response.status == .seeOther, "\(page)")
                #expect(response.headers[.location] == "/admin/login", "\(page)")
                #expect(!response.text.contains(user))
            }
            let session = try #require(try await server.services.store.adminSessions(ofUser: user, limit: 10).first)
            for action in [
                "/admin/users/\(user)/sessions/\(session.id)/revoke", "/admin/users/\(user)/sessions/revoke-all", "/admin/users/\(user)/delete",
                "/admin/users/\(user)/budget", "/admin/users/\(user)/access-codes", "/admin/keys/rotate",
                "/admin/users/\(user)/second-factors/reset", "/admin/account/second-factor", "/admin/sign-in/code",
            ] {
                #expect(try await browser.post(action, [("csrf", "x"), ("limit", "1")]).status == .forbidden, "\(action)")
            }
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .ok)
            #expect(try await server.services.users.user(id: user) != nil)
            #expect(try await server.services.keyRing.records().count == 1)
        }
    }

    /// (Without `admin.require-mfa`: the second step has its own tests, ``AdminSecondFactorTests``.)
    @Test func setUpSignInAndSignOutWithTheCookiesAndHeadersOfAConsole() async throws {
        try await Self.withConsole({ $0.admin.requireMFA = false }) { browser, _, server in
            let (_, token) = try await server.services.admin.createAccount(email: "ann@example.com")
            let page = try await browser.get("/admin/setup?token=\(token)")
            #expect(page.status == .ok)
            #expect(page.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'self'") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(!page.text.contains("<script"))

            // Weak and differing passwords are refused on the page; the link still works.
            let csrf = try ConsoleBrowser.csrf(in: page.text)
            let weak = try await browser.post(
                "/admin/setup", [("csrf", csrf), ("token", token), ("password", "password"), ("password_confirm", "password")])
            #expect(weak.status == .badRequest)
            #expect(weak.text.contains("class=\"flash error\""))
            let differ = try await browser.post(
                "/admin/setup", [("csrf", csrf), ("token", token), ("password", "a long admin passphrase"), ("password_confirm", "another one")])
            #expect(differ.status == .badRequest)

            let done = try await browser.post(
                "/admin/setup",
                [("csrf", csrf), ("token", token), ("password", "a long admin passphrase"), ("password_confirm", "a long admin passphrase")])
            #expect(done.status == .seeOther)
            let cookie = try #require(done.headers[values: .setCookie].first { $0.hasPrefix("latchkey_admin=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/admin"))
            #expect(!cookie.contains("Secure"))  // http: a Secure cookie would never come back
            #expect(try await browser.get("/admin").status == .ok)

            // The link works once.
            #expect(try await browser.get("/admin/setup?token=\(token)").status == .badRequest)

            let out = try await browser.submit("/admin/logout", from: "/admin")
            #expect(out.status == .seeOther)
            #expect(try await browser.get("/admin").headers[.location] == "/admin/login")

            let login = try await browser.get("/admin/login")
            let wrong = try await browser.post(
                "/admin/login", [("csrf", try ConsoleBrowser.csrf(in: login.text)), ("email", "ann@example.com"), ("password", "not it at all")])
            #expect(wrong.status == .unauthorized)
            let unknown = try await browser.post(
                "/admin/login", [("csrf", try ConsoleBrowser.csrf(in: login.text)), ("email", "bob@example.com"), ("password", "not it at all")])
            #expect(unknown.status == .unauthorized)
            #expect(
                wrong.text.firstMatch(of: /class="flash error"[^>]*>([^<]*)</)?.output.1
                    == unknown.text.firstMatch(of: /class="flash error"[^>]*>([^<]*)</)?.output.1)
            let right = try await browser.post(
                "/admin/login",
                [("csrf", try ConsoleBrowser.csrf(in: login.text)), ("email", "ANN@example.com"), ("password", "a long admin passphrase")])
            #expect(right.status == .seeOther)
            #expect(try await browser.get("/admin").status == .ok)
        }
    }

    @Test func behindHTTPSTheSessionCookieIsSecure() async throws {
        try await Self.withConsole({ $0.admin.publicURL = "https://auth.example.com" }) { browser, _, server in
            let cookie = try await browser.setUp(server)
            #expect(cookie.contains("Secure"))
        }
    }

    @Test func signInWithoutThePagesCSRFTokenIsRefused() async throws {
        try await Self.withConsole { browser, _, server in
            _ = try await server.services.admin.createAccount(email: "ann@example.com")
            _ = try await browser.get("/admin/login")
            let forged = try await browser.post("/admin/login", [("email", "ann@example.com"), ("password", "whatever it is")])
            #expect(forged.status == .forbidden)
        }
    }

    @Test func tenFailedSignInsHoldTheAccountBack() async throws {
        try await Self.withConsole { browser, _, server in
            try await browser.setUp(server)
            _ = try await browser.submit("/admin/logout", from: "/admin")
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            for _ in 1...10 {
                #expect(
                    try await browser.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", "wrong guess")]).status
                        == .unauthorized)
            }
            let held = try await browser.post(
                "/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", "a long admin passphrase")])
            #expect(held.status == .tooManyRequests)
            server.clock.advance(by: 15 * 60)
            #expect(
                try await browser.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", "a long admin passphrase")]).status
                    == .seeOther)
        }
    }

    /// Of 40 wrong passwords at once for one admin, at most the limit's 10 are checked (401); the rest are held back (429).
    @Test func fortyConcurrentWrongPasswordsGetAtMostTenTries() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            _ = try await browser.submit("/admin/logout", from: "/admin")
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            let cookie = try #require(browser.cookies["latchkey_admin_pre"])
            let answers = try await racing(40, port: try #require(client.port)) { attempt in
                .init(
                    "/admin/login", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "latchkey_admin_pre=\(cookie)"],
                    body: ByteBuffer(string: "csrf=\(csrf)&email=ann%40example.com&password=wrong+guess+\(attempt)"))
            }
            let checked = answers.filter { $0.status == .unauthorized }.count
            #expect(checked <= 10 && checked > 0, "\(checked) wrong passwords were checked")
            #expect(answers.filter { $0.status == .tooManyRequests }.count == 40 - checked)
            let right = [("csrf", csrf), ("email", "ann@example.com"), ("password", "a long admin passphrase")]
            #expect(try await browser.post("/admin/login", right).status == .tooManyRequests)
        }
    }

    /// The per-client sign-in limit counts an IPv6 client by its /64, as the API's limits do: new addresses of one /64
    /// are the same client; another /64 is another.
    @Test func signInsPerClientCountAnIPv6ClientByItsSlash64() async throws {
        try await Self.withConsole({ configuration in
            configuration.limits.trustedProxies = ["127.0.0.1"]
            configuration.accountLimits.passwordLogin.limit = 3
        }) { browser, client, server in
            _ = try await server.services.admin.createAccount(email: "ann@example.com")
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            let cookie = try #require(browser.cookies["latchkey_admin_pre"])
            func signIn(from address: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/admin/login", method: .post,
                    headers: [
                        .contentType: "application/x-www-form-urlencoded", .cookie: "latchkey_admin_pre=\(cookie)",
                        HTTPField.Name("X-Forwarded-For")!: address,
                    ],
                    body: ByteBuffer(string: "csrf=\(csrf)&email=nobody%40example.com&password=a+guess")
                ).status
            }
            for host in 1...3 { #expect(try await signIn(from: "2001:db8:1:2::\(host)") == .unauthorized) }
            #expect(try await signIn(from: "2001:db8:1:2:ffff::4") == .tooManyRequests)
            #expect(try await signIn(from: "2001:db8:1:3::1") == .unauthorized)
        }
    }

    /// Deleting a user, rotating the signing key and issuing an access code need the password entered again: a session
    /// cookie alone (a stolen one, a browser left open) does none of them, and a refused one changes nothing.
    @Test func deletingRotatingAndIssuingNeedThePasswordAgain() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let userPage = "/admin/users/\(device.userID)"
            let actions = [
                ("\(userPage)/delete", "\(userPage)/delete", [(String, String)]()), ("/admin/keys/rotate", "/admin/keys", []),
                ("\(userPage)/access-codes", userPage, [("expires_in", "7d")]),
            ]
            for (action, page, fields) in actions {
                for password in [nil, "", "a wrong passphrase"] {
                    let refused = try await browser.submit(action, from: page, fields + (password.map { [("password", $0)] } ?? []))
                    #expect(refused.status == .unauthorized, "\(action) without the password")
                    #expect(refused.text.contains("not your password"))
                }
            }
            #expect(try await server.services.users.user(id: device.userID) != nil)
            #expect(try await server.services.keyRing.records().count == 1)
            #expect(try await server.services.accessCodes.list(ofUser: device.userID).isEmpty)
            #expect(try await server.services.audit.events(AuditQuery()).map(\.action).filter { !$0.hasPrefix("admin.") }.isEmpty)

            for (action, page, fields) in actions.reversed() {
                let done = try await browser.submit(action, from: page, fields + [("password", Self.password)])
                #expect([.ok, .seeOther].contains(done.status), "\(action) with the password: \(done.status)")
            }
            #expect(try await server.services.users.user(id: device.userID) == nil)
            #expect(try await server.services.keyRing.records().count == 2)
        }
    }

    /// Wrong passwords entered again are limited per admin, as sign-ins are per address; failed sign-ins with the
    /// admin's address lock sign-ins only, never what the signed-in admin does.
    @Test func wrongPasswordsEnteredAgainAreLimitedApartFromSignIns() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let stranger = ConsoleBrowser(client)
            let csrf = try ConsoleBrowser.csrf(in: try await stranger.get("/admin/login").text)
            for _ in 1...10 { _ = try await stranger.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", "a guess")]) }
            let locked = try await stranger.post("/admin/login", [("csrf", csrf), ("email", "ann@example.com"), ("password", Self.password)])
            #expect(locked.status == .tooManyRequests)
            // The signed-in admin still acts.
            #expect(try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", Self.password)]).status == .seeOther)
            for _ in 1...10 {
                #expect(try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", "a guess")]).status == .unauthorized)
            }
            let held = try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", Self.password)])
            #expect(held.status == .tooManyRequests)
            #expect(try await server.services.keyRing.records().count == 2)
        }
    }

    /// An address under sign-in lockout (anyone can fail sign-ins with any address, before it has an account) does not
    /// hold back the admin `latchkey admin create` (run as a process) names for it: the new admin sets a password and
    /// signs in with it.
    @Test func aLockoutOfTheAddressDoesNotHoldBackTheAdminCreatedForIt() async throws {
        // The server's clock reads the time the CLI's does: the setup link it prints is valid for a day from now.
        try await Self.withConsole(clock: ManualClock(start: Date())) { browser, _, server in
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            for _ in 1...10 {
                let failed = try await browser.post("/admin/login", [("csrf", csrf), ("email", "bob@example.com"), ("password", "a guess")])
                #expect(failed.status == .unauthorized)
            }
            #expect(
                try await browser.post("/admin/login", [("csrf", csrf), ("email", "bob@example.com"), ("password", "a guess")]).status
                    == .tooManyRequests)
            let created = try await AccountCLITests.cli(server, "admin", "create", "bob@example.com")
            #expect(created.exitCode == 0, "\(created)")
            let token = String(try #require(created.stdout.firstMatch(of: /setup\?token=([A-Za-z0-9_-]+)/)?.output.1))
            let setup = try await browser.get("/admin/setup?token=\(token)")
            let fields = [("token", token), ("password", Self.password), ("password_confirm", Self.password)]
            let done = try await browser.post("/admin/setup", [("csrf", try ConsoleBrowser.csrf(in: setup.text))] + fields)
            #expect(done.status == .seeOther)
            _ = try await browser.submit("/admin/logout", from: "/admin/account/second-factor")
            let csrfAgain = try ConsoleBrowser.csrf(in: try await browser.get("/admin/login").text)
            let signedIn = try await browser.post(
                "/admin/login", [("csrf", csrfAgain), ("email", "bob@example.com"), ("password", Self.password)])
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/admin/account/second-factor")  // signed in, held at the enrolment
        }
    }

    @Test func anIdleSessionEnds() async throws {
        try await Self.withConsole { browser, _, server in
            try await browser.setUp(server)
            server.clock.advance(by: 1700)
            #expect(try await browser.get("/admin").status == .ok)  // used: the idle time starts again
            server.clock.advance(by: 1700)
            #expect(try await browser.get("/admin").status == .ok)
            server.clock.advance(by: 1801)
            #expect(try await browser.get("/admin").headers[.location] == "/admin/login")
        }
    }

    /// A revoke needs the session's CSRF token; with it, the session ends everywhere: the API refuses its tokens at once.
    @Test func revokingASessionNeedsTheFormsTokenAndEndsItForTheAPI() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .ok)  // cached as valid
            let userPage = "/admin/users/\(device.userID)"
            let row = try #require(try await server.services.store.adminSessions(ofUser: device.userID, limit: 10).first)
            let revoke = "/admin/users/\(device.userID)/sessions/\(row.id)/revoke"

            #expect(try await browser.post(revoke, []).status == .forbidden)
            #expect(try await browser.post(revoke, [("csrf", "forged")]).status == .forbidden)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .ok)

            let done = try await browser.submit(revoke, from: userPage)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(userPage)?done=session-revoked")
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .unauthorized)
            #expect(try await client.refresh(device.refreshToken).status == .unauthorized)
            #expect(try await browser.get(done.headers[.location]!).text.contains("The session is revoked"))

            let audit = try await server.services.audit.events(AuditQuery(action: "session.revoke"))
            #expect(audit.map(\.actor) == ["admin:ann@example.com"])
            #expect(audit.first?.target == "session \(row.id)")
            #expect(audit.first?.source == "127.0.0.1")
        }
    }

    /// Forms are read by Hummingbird's `URLEncodedFormDecoder`: one that is not well formed (a field given twice, as a
    /// second `csrf` or `limit` smuggled in, or bad percent-encoding) is refused with 403 before anything is done, with
    /// nothing of what was sent in the answer.
    @Test func aFormThatIsNotWellFormedIsRefusedAndChangesNothing() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let userPage = "/admin/users/\(device.userID)"
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get(userPage).text)
            let limit = try await server.services.budgets.budget(ofUser: device.userID).limit
            for fields in [
                [("csrf", csrf), ("limit", "42"), ("limit", "7")], [("csrf", "forged"), ("csrf", csrf), ("limit", "42")],
                [("csrf", csrf), ("limit", "42"), ("limit[x]", "7")],
            ] {
                let refused = try await browser.post("\(userPage)/budget", fields)
                #expect(refused.status == .forbidden, "\(fields.map(\.0))")
                #expect(!refused.text.contains("42"))
            }
            var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            headers[.cookie] = "latchkey_admin=\(browser.cookies["latchkey_admin"] ?? "")"
            let badEncoding = try await client.execute(
                uri: "\(userPage)/budget", method: .post, headers: headers, body: ByteBuffer(string: "csrf=\(csrf)&limit=4%2"))
            #expect(badEncoding.status == .forbidden)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).limit == limit)
            #expect(try await server.services.audit.events(AuditQuery(action: "user.budget.set")).isEmpty)
            // The same form, well formed, is done.
            #expect(try await browser.post("\(userPage)/budget", [("csrf", csrf), ("limit", "42")]).status == .seeOther)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).limit == 42)
        }
    }

    @Test func anAccessCodeIsShownOnceAndWorksThroughTheAPI() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let userPage = "/admin/users/\(device.userID)"
            let issued = try await browser.submit(
                "\(userPage)/access-codes", from: userPage, [("expires_in", "7d"), ("note", "ticket 42"), ("password", Self.password)])
            #expect(issued.status == .ok)
            let code = String(try #require(issued.text.firstMatch(of: /<pre id="issued-code"[^>]*>([^<]+)</)?.output.1))
            let me = try await client.send(.get, "/api/v1/users/me", bearer: code)
            #expect(me.status == .ok)
            #expect(try me.decode(UserProfile.self).userID == device.userID)
            for page in [userPage, "/admin/access-codes", "/admin/audit"] {
                #expect(!(try await browser.get(page).text.contains(code)), "\(page) shows the code")
            }
            let bad = try await browser.submit("\(userPage)/access-codes", from: userPage, [("expires_in", "soon"), ("password", Self.password)])
            #expect(bad.status == .badRequest)
        }
    }

    @Test func deletingTakesAConfirmationStep() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let confirm = try await browser.get("/admin/users/\(device.userID)/delete")
            #expect(confirm.status == .ok)
            #expect(confirm.text.contains("id=\"confirm-delete\""))
            #expect(try await server.services.users.user(id: device.userID) != nil)  // looking deletes nothing
            let done = try await browser.submit(
                "/admin/users/\(device.userID)/delete", from: "/admin/users/\(device.userID)/delete", [("password", Self.password)])
            #expect(done.headers[.location] == "/admin/users?done=user-deleted")
            #expect(try await server.services.users.user(id: device.userID) == nil)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .unauthorized)
            #expect(try await browser.get("/admin/users/\(device.userID)").status == .notFound)
        }
    }

    @Test func budgetKeysAndRevokeAllGoThroughTheServices() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let userPage = "/admin/users/\(device.userID)"
            #expect(try await browser.submit("\(userPage)/budget", from: userPage, [("limit", "42")]).status == .seeOther)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).limit == 42)
            #expect(try await browser.submit("\(userPage)/budget", from: userPage, [("limit", "-1")]).status == .badRequest)
            #expect(try await browser.submit("\(userPage)/sessions/revoke-all", from: userPage).status == .seeOther)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .unauthorized)
            #expect(try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", Self.password)]).status == .seeOther)
            #expect(try await server.services.keyRing.records().count == 2)
            let actions = try await server.services.audit.events(AuditQuery()).map(\.action).filter { !$0.hasPrefix("admin.") }
            #expect(actions == ["key.rotate", "user.sessions.revoke", "user.budget.set"])
            #expect(try await server.services.audit.events(AuditQuery(action: "admin")).map(\.action) == ["admin.mfa.enable", "admin.sign_in"])
        }
    }

    /// What users and providers control is escaped: an identity's subject and email, a note, a search.
    @Test func userControlledTextIsEscaped() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let nasty = "<script>alert(1)</script>\"'&"
            let userID = UUID().uuidString.lowercased()
            _ = try await server.services.store.signIn(
                FederatedIdentity(
                    provider: "apple", subject: nasty, userID: "", email: "x\(nasty)@example.com", clientID: nil, sealedRefreshToken: nil,
                    createdAt: server.clock.now()),
                newUserID: userID, at: server.clock.now())
            let device = try await client.registerDevice()
            _ = try await browser.submit(
                "/admin/users/\(device.userID)/access-codes", from: "/admin/users/\(device.userID)", [("note", nasty), ("password", Self.password)])
            let pages = [
                "/admin/users/\(userID)", "/admin/access-codes",
                "/admin/users?q=\(nasty.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                "/admin/audit?q=\(nasty.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
            ]
            for page in pages {
                let text = try await browser.get(page).text
                #expect(!text.contains("<script>"), "\(page)")
                #expect(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(page)")
            }
            // Found by its provider subject.
            let search = try await browser.get("/admin/users?q=\(nasty.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(search.text.contains("data-user-id=\"\(userID)\""))
        }
    }

    @Test func everyPageRendersForASignedInAdmin() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            _ = try await client.refresh(device.refreshToken)
            for page in Self.pages + [
                "/admin/users/\(device.userID)", "/admin/users/\(device.userID)/delete", "/admin/users?q=\(device.userID)", "/admin/account",
            ] {
                let response = try await browser.get(page)
                #expect(response.status == .ok, "\(page)")
                #expect(response.text.contains("id=\"nav\""), "\(page)")
                #expect(!response.text.contains("style="), "\(page): an inline style breaks the CSP")
            }
            let overview = try await browser.get("/admin").text
            #expect(overview.contains("<svg id='activity-chart'"))
            let stats = try #require(overview.firstMatch(of: /<span class="value">(\d+)<\/span><span class="label">sign-ins, 24 h/)?.output.1)
            #expect(stats == "1")
            #expect(try await browser.get("/admin/static/admin.css").status == .ok)
            #expect(try await browser.get("/admin/users/\(UUID().uuidString)").status == .notFound)
            #expect(try await browser.get("/admin/users/not-a-uuid").status == .notFound)
        }
    }
}
