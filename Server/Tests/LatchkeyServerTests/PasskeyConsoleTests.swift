import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyTestSupport
import Testing

@testable import LatchkeyServer

/// The admin console's side of issue 33: a user's page lists their passkeys (name, created, last used, backed up) and
/// support removes one with the page's form (CSRF-checked, audited with the admin as actor); nothing else of the user's
/// is revoked.
@Suite
struct PasskeyConsoleTests {
    static func withConsole(_ body: @Sendable @escaping (ConsoleBrowser, any TestClientProtocol, TestServer) async throws -> Void) async throws {
        try await AdminConsoleTests.withConsole(
            { configuration in
                configuration.passkeys.rpID = TestServer.rpID
                configuration.passkeys.limit.limit = 0
            }, body)
    }

    @Test func theUserPageListsPasskeysWithNameCreatedLastUsedAndBackedUp() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            var phone = SoftwareAuthenticator()
            var key = SoftwareAuthenticator(backupEligible: false, backedUp: false)
            let (device, first) = try await client.deviceUserWithPasskey(&phone)
            server.clock.advance(by: 60)
            let second = try await client.addPasskey(&key, bearer: device.accessToken, name: "<b>YubiKey</b>")
            server.clock.advance(by: 60)
            #expect(try await client.signInWithPasskey(&phone).status == .ok)

            let page = try await browser.get("/admin/users/\(device.userID)")
            #expect(page.status == .ok)
            let html = page.text
            #expect(html.contains("<h2>Passkeys</h2>"))
            let rows = Self.rows(in: html)
            #expect(rows.map(\.id) == [first.passkeyID, second.passkeyID], "\(rows)")
            #expect(
                rows.first?.cells == ["Passkey", first.createdAt.consoleText, server.clock.now().consoleText, "yes"], "\(rows)")
            // The name is escaped: a passkey's name is the user's text.
            #expect(rows.last?.cells == ["&lt;b&gt;YubiKey&lt;/b&gt;", second.createdAt.consoleText, "never", "no"], "\(rows)")
            #expect(!html.contains("<b>YubiKey</b>"))
        }
    }

    @Test func aUserWithoutPasskeysShowsNone() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            let device = try await client.registerDevice()
            let html = try await browser.get("/admin/users/\(device.userID)").text
            #expect(html.contains("<table id=\"passkeys\">"))
            #expect(Self.rows(in: html).isEmpty)
        }
    }

    /// Remove needs the page's CSRF token; with it the passkey signs in no more, the action is audited with the admin as
    /// actor, and the user's sessions and devices go on.
    @Test func removingAPasskeyNeedsTheFormsTokenIsAuditedAndRevokesNothingElse() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let started = try await client.signInWithPasskey(&authenticator).decode(TokenPairResponse.self)
            let userPage = "/admin/users/\(device.userID)"
            let remove = "\(userPage)/passkeys/\(passkey.passkeyID)/remove"
            #expect(try await browser.get(userPage).text.contains("action=\"\(remove)\""))

            #expect(try await browser.post(remove, []).status == .forbidden)
            #expect(try await browser.post(remove, [("csrf", "forged")]).status == .forbidden)
            #expect(try await client.passkeyList(bearer: device.accessToken).count == 1)

            let done = try await browser.submit(remove, from: userPage)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(userPage)?done=passkey-removed")
            let after = try await browser.get(done.headers[.location]!)
            #expect(after.text.contains("The passkey is removed"))
            #expect(Self.rows(in: after.text).isEmpty)
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
            let refused = try await client.signInWithPasskey(&authenticator)
            #expect(refused.envelope?.error.code == .unknownCredential, "\(refused.text)")

            let audit = try await server.services.audit.events(AuditQuery(action: "passkey.remove"))
            #expect(audit.map(\.actor) == ["admin:ann@example.com"])
            #expect(audit.first?.target == "user \(device.userID)")
            #expect(audit.first?.details?.contains(passkey.passkeyID) == true, "\(audit)")
            #expect(audit.first?.source == "127.0.0.1")
            try await expectAccepted(device.accessToken, by: client)
            try await expectAccepted(started.accessToken, by: client)
            #expect(try await client.refresh(started.refreshToken).status == .ok)
        }
    }

    /// A passkey is removed from its own user's page only: another user's passkey ID (or none) is 404 and removes nothing.
    @Test func anotherUsersPasskeyIsNotFoundOnThisUsersPage() async throws {
        try await Self.withConsole { browser, client, server in
            try await browser.setUp(server)
            var authenticator = SoftwareAuthenticator()
            let (owner, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let other = try await client.registerDevice()
            let otherPage = "/admin/users/\(other.userID)"
            for id in [passkey.passkeyID, UUID().uuidString.lowercased()] {
                let refused = try await browser.submit("\(otherPage)/passkeys/\(id)/remove", from: otherPage)
                #expect(refused.status == .notFound, "\(refused.text)")
            }
            #expect(try await client.passkeyList(bearer: owner.accessToken) == [passkey])
            #expect(try await server.services.audit.events(AuditQuery(action: "passkey.remove")).isEmpty)
        }
    }

    /// Support sees and removes passkeys from the database whatever this server's settings: here a console without
    /// `passkeys.rp-id`, on the database of a server with it.
    @Test func theConsoleListsAndRemovesPasskeysWithPasskeysOff() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let console = try await TestServer.make(database: server.databasePath) { configuration in
                configuration.admin.enabled = true
                configuration.email.argon2Memory = 64
                configuration.email.argon2Iterations = 1
            }
            try await console.test(.live) { consoleClient in
                let browser = ConsoleBrowser(consoleClient)
                try await browser.setUp(console)
                let userPage = "/admin/users/\(device.userID)"
                #expect(Self.rows(in: try await browser.get(userPage).text).map(\.id) == [passkey.passkeyID])
                let done = try await browser.submit("\(userPage)/passkeys/\(passkey.passkeyID)/remove", from: userPage)
                #expect(done.headers[.location] == "\(userPage)?done=passkey-removed", "\(done.status) \(done.text)")
            }
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
        }
    }

    /// The rows of the passkeys table: each passkey's ID and its name, created, last used and backed-up cells.
    static func rows(in html: String) -> [(id: String, cells: [String])] {
        guard let table = html.firstMatch(of: /(?s)<table id="passkeys">(.*?)<\/table>/)?.output.1 else { return [] }
        return table.matches(of: /(?s)<tr data-passkey-id="([^"]+)">(.*?)<\/tr>/).map { row in
            let cells = row.output.2.matches(of: /<td>([^<]*)<\/td>/).map { String($0.output.1) }
            return (String(row.output.1), cells)
        }
    }
}
