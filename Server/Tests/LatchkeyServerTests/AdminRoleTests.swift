import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import SQLKit
import Testing

@testable import LatchkeyServer

/// Console roles: viewer (reads) ⊂ support (user actions, retrying mail) ⊂ owner (keys, access codes, deleting users,
/// console accounts).
/// A POST outside the role answers 403 with the console's page and changes nothing; the page hides what the role
/// cannot use.
@Suite
struct AdminRoleTests {
    /// Every console POST acting on `user` (whose session is `session`, passkey none, code `code`), with the least role
    /// it needs.
    static func actions(user: String, session: String, code: String, mail: Int) -> [(path: String, role: AdminRole)] {
        [
            ("/admin/users/\(user)/disable", .support), ("/admin/users/\(user)/enable", .support),
            ("/admin/users/\(user)/email/resend-verification", .support), ("/admin/users/\(user)/email/send-reset", .support),
            ("/admin/users/\(user)/email/mark-verified", .support), ("/admin/users/\(user)/sessions/\(session)/revoke", .support),
            ("/admin/users/\(user)/sessions/revoke-all", .support), ("/admin/users/\(user)/budget", .support),
            ("/admin/users/\(user)/second-factors/reset", .support),
            ("/admin/users/\(user)/passkeys/\(UUID().uuidString.lowercased())/remove", .support), ("/admin/outbox/\(mail)/retry", .support),
            ("/admin/users/\(user)/access-codes", .owner), ("/admin/users/\(user)/delete", .owner), ("/admin/access-codes/\(code)/revoke", .owner),
            ("/admin/keys/rotate", .owner), ("/admin/admins", .owner), ("/admin/admins/\(UUID().uuidString.lowercased())/role", .owner),
            ("/admin/admins/\(UUID().uuidString.lowercased())/remove", .owner),
        ]
    }

    /// What the refusals must leave as it was.
    struct State: Equatable {
        var disabled: Date?
        var liveSessions: Int
        var verified: Bool
        var mails: Int
        var keys: Int
        var codes: Int
        var activeCodes: Int
        var userExists: Bool
        var limit: Double
        var failedMails: Int
    }

    static func state(_ server: TestServer, user: String) async throws -> State {
        let services = server.services
        let sessions = try await services.store.adminSessions(ofUser: user, limit: 100)
        let mails = try await services.store.outbox(limit: 1000, pendingOnly: false)
        let codes = try await services.accessCodes.list(ofUser: user)
        return State(
            disabled: try await services.store.disabledAt(userID: user), liveSessions: sessions.filter { $0.revokedAt == nil }.count,
            verified: try await services.accounts.account(userID: user)?.verifiedAt != nil, mails: mails.count,
            keys: try await services.keyRing.records().count, codes: codes.count,
            activeCodes: codes.filter { $0.status(at: server.clock.now()) == "active" }.count,
            userExists: try await services.users.user(id: user) != nil, limit: try await services.budgets.budget(ofUser: user).limit,
            failedMails: mails.filter { $0.state == "failed" }.count)
    }

    /// A user with an unverified email account, a live session, an access code and a failed mail.
    static func scene(_ client: any TestClientProtocol, _ server: TestServer) async throws -> (user: String, session: String, code: String, mail: Int)
    {
        let device = try await client.registerDevice()
        let registered = try await client.register("carol@example.com", "a fine long password", bearer: device.accessToken)
        guard registered.status == .created else { throw TestFailure("register answered \(registered.status): \(registered.text)") }
        let (user, session) = (device.userID, device.sessionID)
        let code = try await server.services.accessCodes.issue(userID: user, expiresIn: nil, note: nil).record.id
        // Once the sender tried it (the relay is not there), so nothing changes it behind the test's back.
        let mail = try await outboxEntry(to: "carol@example.com", in: server) { $0.attempts >= 1 && $0.lastError != nil }
        try await server.services.store.markFailed(id: mail.id, error: "550 no such mailbox", retryAt: nil, at: server.clock.now())
        return (user, session, code, mail.id)
    }

    @Test(arguments: [AdminRole.viewer, .support])
    func aPostOutsideTheRoleIsRefusedWith403AndChangesNothing(_ role: AdminRole) async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: role)
            let scene = try await Self.scene(client, server)
            let before = try await Self.state(server, user: scene.user)
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/users/\(scene.user)").text)
            var refused = 0
            for (path, needed) in Self.actions(user: scene.user, session: scene.session, code: scene.code, mail: scene.mail)
            where !role.includes(needed) {
                let answer = try await browser.post(
                    path, [("csrf", csrf), ("limit", "7"), ("password", AdminConsoleTests.password), ("expires_in", "1d")])
                #expect(answer.status == .forbidden, "\(role) \(path)")
                #expect(answer.headers[.contentType] == "text/html; charset=utf-8", "\(path)")
                #expect(answer.text.contains("Not allowed") && answer.text.contains("needs \(needed.rawValue)"), "\(path)")
                refused += 1
            }
            #expect(refused == (role == .viewer ? 18 : 7))
            #expect(try await Self.state(server, user: scene.user) == before)
            // The confirmation page of deleting is the owner's too.
            #expect(try await browser.get("/admin/users/\(scene.user)/delete").status == .forbidden)
        }
    }

    @Test func aViewerReadsEveryPageButSeesNoButton() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .viewer)
            let scene = try await Self.scene(client, server)
            for page in AdminConsoleTests.pages + ["/admin/outbox", "/admin/users/\(scene.user)", "/admin/account"] {
                let answer = try await browser.get(page)
                #expect(answer.status == .ok, "\(page)")
                // The only form that posts is signing out.
                #expect(answer.text.matches(of: /method="post"/).count == 1, "\(page)")
            }
            #expect(try await browser.get("/admin").text.contains(#"<span class="role" id="admin-role">viewer</span>"#))
        }
    }

    @Test func supportSeesUserButtonsButNotTheOwners() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let scene = try await Self.scene(client, server)
            let page = try await browser.get("/admin/users/\(scene.user)").text
            for form in ["disable-user", "resend-verification", "mark-verified", "send-reset", "revoke-all", "budget"] {
                #expect(page.contains("id=\"\(form)\""), "\(form)")
            }
            for form in ["issue-code", "delete-user", "revoke-code"] { #expect(!page.contains(form), "\(form)") }
            #expect(try await browser.get("/admin/outbox").text.contains("class=\"retry-mail\""))
            #expect(!(try await browser.get("/admin/keys").text.contains("rotate-key")))
        }
    }

    @Test func anOwnerMayDoEverything() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .owner)
            let scene = try await Self.scene(client, server)
            let page = try await browser.get("/admin/users/\(scene.user)").text
            for form in ["disable-user", "issue-code", "delete-user", "revoke-code"] { #expect(page.contains(form), "\(form)") }
            let rotated = try await browser.submit("/admin/keys/rotate", from: "/admin/keys", [("password", AdminConsoleTests.password)])
            #expect(rotated.status == .seeOther)
            #expect(try await server.services.keyRing.records().count == 2)
        }
    }

    /// A role changed while signed in applies at the next request.
    @Test func aChangedRoleAppliesAtOnce() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .owner)
            let device = try await client.registerDevice()
            let csrf = try ConsoleBrowser.csrf(in: try await browser.get("/admin/users/\(device.userID)").text)
            try await server.services.database.transaction { sql in
                try await sql.raw("UPDATE admin_accounts SET role = 'viewer'").run()
            }
            #expect(try await browser.post("/admin/users/\(device.userID)/disable", [("csrf", csrf)]).status == .forbidden)
            #expect(try await server.services.store.disabledAt(userID: device.userID) == nil)
        }
    }
}

/// `latchkey admin create --role` and `admin list`'s roles.
@Suite
struct AdminRoleCLITests {
    @Test func createMakesSupportAccountsUnlessTheRoleIsGivenAndListShowsRoles() async throws {
        let server = try await TestServer.make()
        let plain = try await AccountCLITests.cli(server, "admin", "create", "sue@example.com")
        #expect(plain.exitCode == 0, "\(plain)")
        let viewer = try await AccountCLITests.cli(server, "admin", "create", "vic@example.com", "--role", "viewer")
        #expect(viewer.exitCode == 0, "\(viewer)")
        let owner = try await AccountCLITests.cli(server, "admin", "create", "oli@example.com", "--role", "owner")
        #expect(owner.exitCode == 0, "\(owner)")
        let roles = Dictionary(uniqueKeysWithValues: try await server.services.admin.accounts().map { ($0.email, $0.role) })
        #expect(roles == ["sue@example.com": .support, "vic@example.com": .viewer, "oli@example.com": .owner])
        let list = try await AccountCLITests.cli(server, "admin", "list")
        #expect(list.stdout.contains("ROLE"))
        for (email, role) in roles {
            #expect(list.stdout.split(separator: "\n").contains { $0.hasPrefix(email) && $0.hasSuffix("\t\(role.rawValue)") })
        }
        let events = try await server.services.audit.events(AuditQuery(action: AuditAction.adminCreate))
        #expect(events.first { $0.target == "admin vic@example.com" }?.details == "role viewer")
    }

    @Test func aBadRoleIsAUsageErrorAndCreatesNothing() async throws {
        let server = try await TestServer.make()
        let bad = try await AccountCLITests.cli(server, "admin", "create", "sue@example.com", "--role", "superuser")
        #expect(bad.exitCode == 2, "\(bad)")
        #expect(bad.stderr.contains("--role"))
        #expect(try await server.services.admin.accounts().isEmpty)
    }

    /// A new setup link keeps the role unless `--role` is given; a change is audited `admin.role.set`.
    @Test func recreatingKeepsTheRoleOrChangesItAudited() async throws {
        let server = try await TestServer.make()
        #expect(try await AccountCLITests.cli(server, "admin", "create", "sue@example.com", "--role", "owner").exitCode == 0)
        #expect(try await AccountCLITests.cli(server, "admin", "create", "sue@example.com").exitCode == 0)
        #expect(try await server.services.admin.accounts().first?.role == .owner)
        #expect(try await server.services.audit.events(AuditQuery(action: AuditAction.adminRoleSet)).isEmpty)
        #expect(try await AccountCLITests.cli(server, "admin", "create", "sue@example.com", "--role", "viewer").exitCode == 0)
        #expect(try await server.services.admin.accounts().first?.role == .viewer)
        let change = try #require(try await server.services.audit.events(AuditQuery(action: AuditAction.adminRoleSet)).first)
        #expect(change.target == "admin sue@example.com")
        #expect(change.details == "owner → viewer")
    }

    /// Accounts made before roles existed are owners (migration 18's default).
    @Test func accountsFromBeforeRolesAreOwners() async throws {
        let server = try await TestServer.make()
        let now = server.clock.now().timeIntervalSince1970
        try await server.services.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO admin_accounts (id, email, email_key, created_at) VALUES ('a1', 'old@example.com', 'old@example.com', \(bind: now))
                """
            ).run()
        }
        #expect(try await server.services.admin.accounts().first?.role == .owner)
    }
}
