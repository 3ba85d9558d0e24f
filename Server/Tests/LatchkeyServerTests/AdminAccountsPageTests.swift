import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import Testing

@testable import LatchkeyServer

/// The console's own accounts at `/admin/admins`: every role reads the list; an owner adds an account (the setup link
/// shown once, and it works), changes a role and removes an account, each with their password again, audited; the
/// console always keeps an owner.
@Suite
struct AdminAccountsPageTests {
    static func roles(_ server: TestServer) async throws -> [String: AdminRole] {
        Dictionary(uniqueKeysWithValues: try await server.services.admin.accounts().map { ($0.email, $0.role) })
    }

    static func id(of email: String, _ server: TestServer) async throws -> String {
        try #require(try await server.services.admin.accounts().first { $0.email == email }?.id)
    }

    @Test func anOwnerAddsAnAccountWhoseSetupLinkIsShownOnceAndWorks() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .owner)
            let page = try await browser.get("/admin/admins")
            #expect(page.status == .ok)
            #expect(page.text.contains(#"href="/admin/admins" class="active""#))
            #expect(page.text.contains("ann@example.com <span class=\"muted\">(you)</span>"))
            #expect(page.text.contains("1 account."))

            let added = try await browser.submit(
                "/admin/admins", from: "/admin/admins",
                [("email", "Vic@Example.com"), ("role", "viewer"), ("password", AdminConsoleTests.password)])
            #expect(added.status == .ok, "\(added.text)")
            let link = try #require(added.text.firstMatch(of: /<code id="setup-link" class="code">([^<]+)<\/code>/)?.output.1)
            let token = try #require(link.firstMatch(of: /\/admin\/setup\?token=([A-Za-z0-9_-]+)$/)?.output.1)
            #expect(try await Self.roles(server).first { $0.key.lowercased() == "vic@example.com" }?.value == .viewer)
            // Not on the list page, nor in the audit.
            #expect(!(try await browser.get("/admin/admins").text.contains(String(token))))
            let created = try #require(try await server.services.audit.events(AuditQuery(action: AuditAction.adminCreate)).first)
            #expect(created.actor == "admin:ann@example.com")
            #expect(created.details == "role viewer")
            #expect(!(created.details ?? "").contains(String(token)))

            // The new person sets a password with the link in a browser of their own and reads as a viewer.
            let vic = ConsoleBrowser(client)
            try await vic.setUp(server, token: String(token), password: "another long passphrase")
            #expect(try await vic.get("/admin/admins").text.contains(#"<span class="role" id="admin-role">viewer</span>"#))
        }
    }

    @Test func anAddressWithAnAccountABadAddressABadRoleOrAWrongPasswordChangesNothing() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, _, server in
            try await browser.setUp(server, role: .owner)
            let before = try await server.services.admin.accounts()
            let password = AdminConsoleTests.password
            let cases: [([(String, String)], HTTPResponse.Status, String)] = [
                ([("email", "ann@example.com"), ("role", "viewer"), ("password", password)], .conflict, "has a console account already"),
                ([("email", "not an address"), ("role", "viewer"), ("password", password)], .badRequest, "not an email address"),
                ([("email", "bo@example.com"), ("role", "root"), ("password", password)], .badRequest, "Choose a role"),
                ([("email", "bo@example.com"), ("role", "viewer"), ("password", "wrong")], .unauthorized, ""),
            ]
            for (fields, status, text) in cases {
                let answer = try await browser.submit("/admin/admins", from: "/admin/admins", fields)
                #expect(answer.status == status, "\(fields): \(answer.text)")
                #expect(text.isEmpty || answer.text.contains(text), "\(fields)")
            }
            #expect(try await server.services.admin.accounts() == before)
            #expect(try await server.services.audit.events(AuditQuery(action: AuditAction.adminCreate)).isEmpty)
        }
    }

    @Test func anOwnerChangesARoleAuditedAndTheLastOwnerCannotBeDemoted() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, _, server in
            try await browser.setUp(server, role: .owner)
            _ = try await server.services.admin.createAccount(email: "sue@example.com", role: .support)
            let sue = try await Self.id(of: "sue@example.com", server)
            let ann = try await Self.id(of: "ann@example.com", server)

            let promoted = try await browser.submit(
                "/admin/admins/\(sue)/role", from: "/admin/admins", [("role", "owner"), ("password", AdminConsoleTests.password)])
            #expect(promoted.status == .seeOther)
            #expect(promoted.headers[.location] == "/admin/admins?done=role-set")
            #expect(try await Self.roles(server)["sue@example.com"] == .owner)
            let change = try #require(try await server.services.audit.events(AuditQuery(action: AuditAction.adminRoleSet)).first)
            #expect(change.target == "admin sue@example.com")
            #expect(change.details == "support → owner")
            #expect(change.actor == "admin:ann@example.com")

            // Sue demotes to viewer; then Ann, the only owner left, cannot give up the role.
            #expect(
                try await browser.submit(
                    "/admin/admins/\(sue)/role", from: "/admin/admins", [("role", "viewer"), ("password", AdminConsoleTests.password)]
                ).status == .seeOther)
            let refused = try await browser.submit(
                "/admin/admins/\(ann)/role", from: "/admin/admins", [("role", "support"), ("password", AdminConsoleTests.password)])
            #expect(refused.status == .conflict)
            #expect(refused.text.contains("only owner"))
            #expect(try await Self.roles(server) == ["ann@example.com": .owner, "sue@example.com": .viewer])

            // A wrong password and an unknown account change nothing.
            #expect(
                try await browser.submit("/admin/admins/\(sue)/role", from: "/admin/admins", [("role", "owner"), ("password", "wrong")]).status
                    == .unauthorized)
            #expect(
                try await browser.submit(
                    "/admin/admins/\(UUID().uuidString.lowercased())/role", from: "/admin/admins",
                    [("role", "owner"), ("password", AdminConsoleTests.password)]
                ).status == .notFound)
            #expect(try await Self.roles(server) == ["ann@example.com": .owner, "sue@example.com": .viewer])
        }
    }

    @Test func anOwnerRemovesAnotherAccountWhoseSessionsEndButNeverTheirOwn() async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .owner)
            let sue = ConsoleBrowser(client)
            try await sue.setUp(server, email: "sue@example.com", password: "another long passphrase", role: .owner)
            let sueID = try await Self.id(of: "sue@example.com", server)
            let annID = try await Self.id(of: "ann@example.com", server)

            let own = try await browser.submit(
                "/admin/admins/\(annID)/remove", from: "/admin/admins", [("password", AdminConsoleTests.password)])
            #expect(own.status == .conflict)
            #expect(own.text.contains("your own account"))
            #expect(!(try await browser.get("/admin/admins").text.contains("/admin/admins/\(annID)/remove")))

            let removed = try await browser.submit(
                "/admin/admins/\(sueID)/remove", from: "/admin/admins", [("password", AdminConsoleTests.password)])
            #expect(removed.status == .seeOther)
            #expect(try await Self.roles(server) == ["ann@example.com": .owner])
            // Sue's session ended with her account.
            #expect(try await sue.get("/admin").status != .ok)
            let event = try #require(try await server.services.audit.events(AuditQuery(action: AuditAction.adminRemove)).first)
            #expect(event.target == "admin sue@example.com")
        }
    }

    @Test(arguments: [AdminRole.viewer, .support])
    func viewersAndSupportReadTheListButEveryChangeIs403(_ role: AdminRole) async throws {
        try await AdminConsoleSupportTests.withMailConsole { browser, _, server in
            try await browser.setUp(server, role: role)
            _ = try await server.services.admin.createAccount(email: "oli@example.com", role: .owner)
            let oli = try await Self.id(of: "oli@example.com", server)
            let page = try await browser.get("/admin/admins")
            #expect(page.status == .ok)
            #expect(page.text.contains("oli@example.com"))
            #expect(!page.text.contains("add-admin") && !page.text.contains("set-role") && !page.text.contains("remove-admin"))
            let before = try await server.services.admin.accounts()
            let csrf = try ConsoleBrowser.csrf(in: page.text)
            for (path, fields) in [
                ("/admin/admins", [("email", "eve@example.com"), ("role", "owner")]), ("/admin/admins/\(oli)/role", [("role", "viewer")]),
                ("/admin/admins/\(oli)/remove", []),
            ] {
                let answer = try await browser.post(path, [("csrf", csrf), ("password", AdminConsoleTests.password)] + fields)
                #expect(answer.status == .forbidden, "\(path)")
                #expect(answer.text.contains("needs owner"), "\(path)")
            }
            #expect(try await server.services.admin.accounts() == before)
        }
    }
}
