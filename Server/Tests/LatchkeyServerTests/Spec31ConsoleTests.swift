import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import NIOCore
import SQLKit
import Testing

@testable import LatchkeyServer

/// A `<form>` of a console page, as a browser sees it.
struct Spec31Form: CustomStringConvertible {
    let action: String
    let method: String
    let hidden: [(String, String)]
    let inputs: [String]
    let labels: [String]
    var description: String { "\(self.method) \(self.action) \(self.labels)" }

    static func all(in html: String) -> [Spec31Form] {
        html.matches(of: /(?s)<form\b([^>]*)>(.*?)<\/form>/).map { match in
            let attributes = String(match.output.1)
            let inner = String(match.output.2)
            let action = Self.unescape(Self.attribute("action", in: attributes) ?? "")
            let method = (Self.attribute("method", in: attributes) ?? "get").lowercased()
            var hidden: [(String, String)] = []
            var inputs: [String] = []
            var labels: [String] = []
            for input in inner.matches(of: /<input\b([^>]*)>/) {
                let tag = String(input.output.1)
                let name = Self.attribute("name", in: tag)
                let type = (Self.attribute("type", in: tag) ?? "text").lowercased()
                if let name { inputs.append(name) }
                if type == "hidden", let name { hidden.append((name, Self.unescape(Self.attribute("value", in: tag) ?? ""))) }
                if type == "submit", let value = Self.attribute("value", in: tag) { labels.append(Self.unescape(value)) }
            }
            for field in inner.matches(of: /<(?:select|textarea)\b([^>]*)>/) {
                if let name = Self.attribute("name", in: String(field.output.1)) { inputs.append(name) }
            }
            for button in inner.matches(of: /(?s)<button\b[^>]*>(.*?)<\/button>/) {
                let text = String(button.output.1).replacing(/<[^>]*>/, with: "").trimmingCharacters(in: .whitespacesAndNewlines)
                labels.append(Self.unescape(text))
            }
            return Spec31Form(action: action, method: method, hidden: hidden, inputs: inputs, labels: labels)
        }
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        for match in tag.matches(of: /([a-zA-Z_:-]+)\s*=\s*("([^"]*)"|'([^']*)')/) where match.output.1.lowercased() == name {
            return String(match.output.3 ?? match.output.4 ?? "")
        }
        return nil
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
    }
}

extension ConsoleBrowser {
    /// Posts `form` with its hidden fields, this browser's CSRF token (read from `page`) and `extra` for its other inputs.
    func submit(_ form: Spec31Form, from page: String, password: String = AdminConsoleTests.password) async throws -> TestResponse {
        let csrf = try Self.csrf(in: try await self.get(page).text)
        var fields = form.hidden.filter { $0.0 != "csrf" }
        let extra = ["password": password, "limit": "1", "expires_in": "7d", "note": "spec", "email": "x@example.com", "role": "owner"]
        for name in form.inputs where !fields.contains(where: { $0.0 == name }) && name != "csrf" {
            if let value = extra[name] { fields.append((name, value)) }
        }
        return try await self.post(form.action, [("csrf", csrf)] + fields)
    }
}

/// Issue 31, the console for support's real day, from the issue's text: roles, disabling from the user's page, the
/// outbox page, the console's own 404 page, "1 device".
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct Spec31ConsoleTests {
    /// A live console (the clock reads now, so `latchkey admin create`'s setup link is valid) mailing through the SMTP peer.
    static func withConsole(
        _ body: @Sendable @escaping (any TestClientProtocol, TestServer, SMTPPeer) async throws -> Void
    ) async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make(clock: ManualClock(start: Date())) { configuration in
            configuration.useMailPeer(peer)
            configuration.admin.enabled = true
        }
        try await server.test(.live) { client in try await body(client, server, peer) }
    }

    /// `latchkey admin create <email> [--role role]`: the setup token it prints.
    static func createAdmin(_ server: TestServer, _ email: String, role: String?) async throws -> String {
        let run = try await server.cli(["admin", "create", email] + (role.map { ["--role", $0] } ?? []))
        #expect(run.exitCode == 0, "\(run)")
        return String(try #require(run.stdout.firstMatch(of: /setup\?token=([A-Za-z0-9_-]+)/)?.output.1, "\(run)"))
    }

    static func role(of email: String, in server: TestServer) async throws -> String? {
        try await server.services.database.read { sql in
            try await sql.raw("SELECT role FROM admin_accounts WHERE email = \(bind: email)").first()
                .map { try $0.decode(column: "role", as: String.self) }
        }
    }

    /// A signed-in browser for a new admin of `role` (nil: the CLI's default).
    static func admin(_ client: any TestClientProtocol, _ server: TestServer, _ email: String, role: String?) async throws -> ConsoleBrowser {
        let token = try await Self.createAdmin(server, email, role: role)
        let browser = ConsoleBrowser(client)
        try await browser.setUp(server, token: token)
        return browser
    }

    /// A user with a device session, an access code, and a failed mail in the outbox (to the peer's refusing address).
    static func scene(_ client: any TestClientProtocol, _ server: TestServer) async throws -> (device: TokenPairResponse, failed: String) {
        let device = try await client.registerDevice()
        _ = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: "ticket")
        let failed = newAddress("refuse")
        #expect(try await client.register(failed, "correct horse battery staple").status == .created)
        _ = try await outboxEntry(to: failed, in: server) { $0.state == "failed" }
        return (device, failed)
    }

    static func pages(user: String) -> [String] {
        [
            "/admin", "/admin/users", "/admin/users/\(user)", "/admin/users/\(user)/delete", "/admin/access-codes", "/admin/keys", "/admin/webhooks",
            "/admin/audit", "/admin/outbox",
        ]
    }

    static func isOwnAccountForm(_ action: String) -> Bool {
        ["/admin/logout", "/admin/account", "/admin/sign-in", "/admin/login", "/admin/setup"].contains { action.hasPrefix($0) }
    }

    // MARK: roles

    @Test func adminCreateDefaultsToSupportAndTakesEachRole() async throws {
        try await Self.withConsole { _, server, _ in
            _ = try await Self.createAdmin(server, "default@example.com", role: nil)
            #expect(try await Self.role(of: "default@example.com", in: server) == "support")
            for role in ["viewer", "support", "owner"] {
                _ = try await Self.createAdmin(server, "\(role)@example.com", role: role)
                #expect(try await Self.role(of: "\(role)@example.com", in: server) == role)
            }
            let bad = try await server.cli(["admin", "create", "bad@example.com", "--role", "superuser"])
            #expect(bad.exitCode != 0, "\(bad)")
            #expect(try await Self.role(of: "bad@example.com", in: server) == nil)
        }
    }

    /// An admin row as it stood before roles (no role written: the column's default) acts as an owner.
    @Test func anAdminFromBeforeRolesIsAnOwner() async throws {
        try await Self.withConsole { client, server, _ in
            let token = try await Self.createAdmin(server, "old@example.com", role: "viewer")
            try await server.services.database.transaction { sql in
                let row = try #require(
                    try await sql.raw(
                        "SELECT id, email, email_key, setup_hash, setup_expires_at, created_at FROM admin_accounts WHERE email = 'old@example.com'"
                    ).first())
                let (id, email, key) = (
                    try row.decode(column: "id", as: String.self), try row.decode(column: "email", as: String.self),
                    try row.decode(column: "email_key", as: String.self)
                )
                let (hash, expires, created) = (
                    try row.decode(column: "setup_hash", as: String.self), try row.decode(column: "setup_expires_at", as: Double.self),
                    try row.decode(column: "created_at", as: Double.self)
                )
                try await sql.raw("DELETE FROM admin_accounts WHERE id = \(bind: id)").run()
                try await sql.raw(
                    """
                    INSERT INTO admin_accounts (id, email, email_key, setup_hash, setup_expires_at, created_at) \
                    VALUES (\(bind: id), \(bind: email), \(bind: key), \(bind: hash), \(bind: expires), \(bind: created))
                    """
                ).run()
            }
            #expect(try await Self.role(of: "old@example.com", in: server) == "owner")
            let browser = ConsoleBrowser(client)
            try await browser.setUp(server, token: token)
            let rotated = try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", AdminConsoleTests.password)])
            #expect(rotated.status == .seeOther, "\(rotated.status)")
            #expect(try await server.services.keyRing.records().count == 2)
        }
    }

    /// A viewer reads every page, and every console POST (each form an owner sees, and the known actions) answers 403 and
    /// changes nothing.
    @Test func aViewerReadsButEveryPostIs403AndChangesNothing() async throws {
        try await Self.withConsole { client, server, _ in
            let (device, _) = try await Self.scene(client, server)
            let owner = try await Self.admin(client, server, "owner@example.com", role: "owner")
            let viewer = try await Self.admin(client, server, "viewer@example.com", role: "viewer")
            let user = device.userID
            let code = try #require(try await server.services.accessCodes.list(ofUser: user).first)
            let session = try #require(try await server.services.store.adminSessions(ofUser: user, limit: 10).first)
            var actions = [
                "/admin/users/\(user)/sessions/\(session.id)/revoke", "/admin/users/\(user)/sessions/revoke-all", "/admin/users/\(user)/budget",
                "/admin/users/\(user)/access-codes", "/admin/users/\(user)/delete", "/admin/users/\(user)/second-factors/reset",
                "/admin/access-codes/\(code.id)/revoke", "/admin/keys/rotate",
            ].map { Spec31Form(action: $0, method: "post", hidden: [], inputs: ["password", "limit", "expires_in"], labels: []) }
            for page in Self.pages(user: user) {
                let seen = try await owner.get(page)
                #expect(seen.status == .ok, "owner \(page): \(seen.status)")
                actions += Spec31Form.all(in: seen.text).filter { $0.method == "post" && !Self.isOwnAccountForm($0.action) }
                if !page.hasSuffix("/delete") { #expect(try await viewer.get(page).status == .ok, "viewer \(page)") }
            }
            #expect(actions.count > 10)
            let before = try await Spec31.snapshot(server)
            for form in actions {
                let answer = try await viewer.submit(form, from: "/admin/users/\(user)")
                #expect(answer.status == .forbidden, "viewer \(form): \(answer.status)")
            }
            #expect(try await Spec31.snapshot(server) == before)
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    /// Support does user actions; keys, admins and access codes are the owner's: each such POST is 403 and changes nothing.
    @Test func supportDoesUserActionsButNotTheOwnersKeysAdminsOrCodes() async throws {
        try await Self.withConsole { client, server, _ in
            let (device, _) = try await Self.scene(client, server)
            let owner = try await Self.admin(client, server, "owner@example.com", role: "owner")
            let support = try await Self.admin(client, server, "support@example.com", role: nil)
            let user = device.userID
            let code = try #require(try await server.services.accessCodes.list(ofUser: user).first)
            var ownerOnly = ["/admin/users/\(user)/access-codes", "/admin/access-codes/\(code.id)/revoke", "/admin/keys/rotate"].map {
                Spec31Form(action: $0, method: "post", hidden: [], inputs: ["password", "expires_in", "note"], labels: [])
            }
            for page in ["/admin/keys", "/admin/access-codes", "/admin/admins"] {
                let seen = try await owner.get(page)
                guard seen.status == .ok else { continue }
                ownerOnly += Spec31Form.all(in: seen.text).filter { $0.method == "post" && !Self.isOwnAccountForm($0.action) }
            }
            let before = try await Spec31.snapshot(server)
            for form in ownerOnly {
                let answer = try await support.submit(form, from: "/admin/users/\(user)")
                #expect(answer.status == .forbidden, "support \(form): \(answer.status)")
            }
            #expect(try await Spec31.snapshot(server) == before)
            // A user action is support's.
            let budget = try await support.submit("/admin/users/\(user)/budget", from: "/admin/users/\(user)", [("limit", "42")])
            #expect(budget.status == .seeOther, "support budget: \(budget.status)")
            #expect(try await server.services.budgets.budget(ofUser: user).limit == 42)
            // And the owner does the owner's.
            #expect(try await owner.submit("/admin/keys/rotate", from: "/admin/keys", [("password", AdminConsoleTests.password)]).status == .seeOther)
        }
    }

    // MARK: disabling from the user's page

    /// The user's page has a "Disable user" button (a form POST, with or without a confirmation step); done, the API refuses
    /// the user's token and sign-in.
    @Test func theDisableUserButtonDisablesTheUser() async throws {
        try await Self.withConsole { client, server, _ in
            let device = try await client.registerDevice()
            let support = try await Self.admin(client, server, "support@example.com", role: "support")
            let userPage = "/admin/users/\(device.userID)"
            let page = try await support.get(userPage)
            let form = try #require(
                Spec31Form.all(in: page.text).first { $0.labels.contains { $0 == "Disable user" } }, "no Disable user button on \(userPage)")
            #expect(form.method == "post")
            var answer = try await support.submit(form, from: userPage)
            if answer.status == .ok,
                let confirm = Spec31Form.all(in: answer.text).first(where: { $0.method == "post" && !Self.isOwnAccountForm($0.action) })
            {
                answer = try await support.submit(confirm, from: userPage)
            }
            #expect([.seeOther, .ok].contains(answer.status), "\(answer.status)")
            try await expectRefused(device.accessToken, by: client)
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            Spec31.expectStatus(again, .forbidden, .userDisabled, "sign-in after the console disabled the user")
            #expect(try await server.services.audit.events(AuditQuery(action: "user.disable")).count == 1)
        }
    }

    // MARK: outbox

    @Test func theOutboxPageIsInTheNavigationAndListsFailedMailWithRetry() async throws {
        try await Self.withConsole { client, server, _ in
            let (_, failed) = try await Self.scene(client, server)
            let support = try await Self.admin(client, server, "support@example.com", role: "support")
            let overview = try await support.get("/admin").text
            let navStart = try #require(overview.range(of: "id=\"nav\""), "no navigation on /admin")
            let nav = String(overview[navStart.lowerBound...].prefix(4000).split(separator: "</nav>", maxSplits: 1).first ?? "")
            #expect(nav.contains("href=\"/admin/outbox\""), "the navigation does not link /admin/outbox")
            let page = try await support.get("/admin/outbox")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            let text = page.text
            #expect(text.contains(failed), "recipient")
            let lower = text.lowercased()
            for column in ["recipient", "purpose", "state", "attempts", "last error"] { #expect(lower.contains(column), "column \(column)") }
            #expect(lower.contains("failed"))
            #expect(text.contains("550"), "the last error")
            let entry = try await outboxEntry(to: failed, in: server) { $0.state == "failed" }
            let retry = try #require(Spec31Form.all(in: text).first { $0.labels.contains("Retry") }, "no Retry button")
            #expect(retry.method == "post")
            let answer = try await support.submit(retry, from: "/admin/outbox")
            #expect([.seeOther, .ok].contains(answer.status), "retry: \(answer.status)")
            _ = try await outboxEntry(to: failed, in: server) { $0.state != "failed" || $0.attempts > entry.attempts }
        }
    }

    // MARK: 404, singular

    @Test func anUnknownAdminPathIsTheConsoles404PageSignedInOrNot() async throws {
        try await Self.withConsole { client, server, _ in
            let anonymous = ConsoleBrowser(client)
            let admin = try await Self.admin(client, server, "owner@example.com", role: "owner")
            for browser in [anonymous, admin] {
                for path in ["/admin/nope", "/admin/users/x/y/z", "/admin/static/nope.css", "/admin/outbox/zzz/yyy", "/admin/api/v1/health"] {
                    for method in [HTTPRequest.Method.get, .post] {
                        let answer = method == .get ? try await browser.get(path) : try await browser.post(path, [("csrf", "x")])
                        #expect(answer.status == .notFound, "\(method) \(path): \(answer.status)")
                        #expect(
                            answer.headers[.contentType]?.hasPrefix("text/html") == true,
                            "\(method) \(path): \(String(describing: answer.headers[.contentType]))")
                        #expect(!answer.text.hasPrefix("{"), "\(method) \(path) answered JSON")
                    }
                }
            }
        }
    }

    @Test func oneDeviceIsSingular() async throws {
        try await Self.withConsole { client, server, _ in
            let device = try await client.registerDevice()
            let admin = try await Self.admin(client, server, "viewer@example.com", role: "viewer")
            for page in ["/admin/users", "/admin/users/\(device.userID)"] {
                let text = try await admin.get(page).text.replacing(/<[^>]*>/, with: " ").replacing(/\s+/, with: " ")
                #expect(!text.contains(" 1 devices"), "\(page) says 1 devices")
            }
            let list = try await admin.get("/admin/users").text.replacing(/<[^>]*>/, with: " ").replacing(/\s+/, with: " ")
            #expect(list.contains("1 device"), "the users list does not say 1 device")
        }
    }
}
