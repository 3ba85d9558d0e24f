import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import NIOCore
import Testing

@testable import LatchkeyServer

/// Support's day in the console: disabling and enabling a user (then the API refuses them), the mails of their address,
/// the outbox with its retry, the users list's filters, search and pages, and the console's own 404 page.
@Suite
struct AdminConsoleSupportTests {
    /// A live console whose email accounts are on, mailing to a relay that is not there: mail stays in the outbox.
    static func withMailConsole(
        _ body: @Sendable @escaping (ConsoleBrowser, any TestClientProtocol, TestServer) async throws -> Void
    ) async throws {
        let port = try await unusedPort()
        try await AdminConsoleTests.withConsole({ configuration in
            configuration.useMailRelay(port: port)
            configuration.admin.requireMFA = false
        }) { browser, client, server in try await body(browser, client, server) }
    }

    static func mails(to recipient: String, _ server: TestServer) async throws -> [OutboxEntry] {
        try await server.services.store.outbox(limit: 1000, pendingOnly: false).filter { $0.recipient == recipient }
    }

    @Test func disablingFromTheConsoleEndsTheUsersAccessAndEnablingLetsThemSignInAgain() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let device = try await client.registerDevice()
            let page = try await browser.get("/admin/users/\(device.userID)")
            #expect(page.text.contains(">Disable user</button>"))
            #expect(!page.text.contains(">Enable user</button>"))

            let disabled = try await browser.submit("/admin/users/\(device.userID)/disable", from: "/admin/users/\(device.userID)")
            #expect(disabled.status == .seeOther)
            #expect(disabled.headers[.location] == "/admin/users/\(device.userID)?done=user-disabled")
            let after = try await browser.get(disabled.headers[.location]!)
            #expect(after.text.contains("The user is disabled"))
            #expect(after.text.contains(">Enable user</button>"))
            #expect(!after.text.contains(">Disable user</button>"))

            let me = try await client.me(device.accessToken)
            #expect(me.status == .unauthorized)
            #expect(me.envelope?.error.code == .invalidToken)
            let refresh = try await client.refresh(device.refreshToken)
            #expect(refresh.status == .forbidden)
            #expect(refresh.envelope?.error.code == .userDisabled)
            let signIn = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            #expect(signIn.status == .forbidden)
            #expect(signIn.envelope?.error.code == .userDisabled)
            #expect(try await server.services.audit.events(AuditQuery(action: "user.disable")).first?.actor == "admin:ann@example.com")

            let enabled = try await browser.submit("/admin/users/\(device.userID)/enable", from: "/admin/users/\(device.userID)")
            #expect(enabled.headers[.location] == "/admin/users/\(device.userID)?done=user-enabled")
            #expect(try await server.services.store.disabledAt(userID: device.userID) == nil)
            _ = try await client.registerAgain(device)
            #expect(try await server.services.audit.events(AuditQuery(action: "user.enable")).first?.target == "user \(device.userID)")
        }
    }

    @Test func resendingTheVerificationPutsAMailInTheOutboxAndMarkingVerifiedLetsThemSignIn() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let device = try await client.registerDevice()
            let email = "dave@example.com"
            #expect(try await client.register(email, "a fine long password", bearer: device.accessToken).status == .created)
            #expect(try await Self.mails(to: email, server).count == 1)
            let user = "/admin/users/\(device.userID)"
            let page = try await browser.get(user).text
            #expect(page.contains(">Resend verification email</button>"))
            #expect(page.contains(">Mark email verified</button>"))

            // Within the minute of the registration's mail: support's resend is not held back by the address's limits.
            let resent = try await browser.submit("\(user)/email/resend-verification", from: user)
            #expect(resent.headers[.location] == "\(user)?done=verification-sent")
            let mails = try await Self.mails(to: email, server)
            #expect(mails.count == 2)
            #expect(mails.allSatisfy { $0.purpose == "verify" })
            #expect(try await server.services.audit.events(AuditQuery(action: AuditAction.userVerificationResend)).count == 1)

            #expect(try await client.login(email, "a fine long password").envelope?.error.code == .emailNotVerified)
            let marked = try await browser.submit("\(user)/email/mark-verified", from: user)
            #expect(marked.headers[.location] == "\(user)?done=email-verified")
            #expect(try await client.login(email, "a fine long password").status == .ok)
            let verifiedPage = try await browser.get(user).text
            #expect(!verifiedPage.contains("Resend verification email"))
            #expect(!verifiedPage.contains("Mark email verified"))
            // Nothing left to resend: no mail.
            let again = try await browser.submit("\(user)/email/resend-verification", from: user)
            #expect(again.headers[.location] == "\(user)?done=no-unverified-email")
            #expect(try await Self.mails(to: email, server).count == 2)
        }
    }

    @Test func sendingAPasswordResetPutsAResetMailInTheOutbox() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let device = try await client.registerDevice()
            let email = "erin@example.com"
            #expect(try await client.register(email, "a fine long password", bearer: device.accessToken).status == .created)
            let user = "/admin/users/\(device.userID)"
            // An unverified address gets no reset.
            #expect(try await browser.submit("\(user)/email/send-reset", from: user).headers[.location] == "\(user)?done=no-resettable-email")
            try await server.services.accounts.markVerified(userID: device.userID)
            let sent = try await browser.submit("\(user)/email/send-reset", from: user)
            #expect(sent.headers[.location] == "\(user)?done=reset-sent")
            #expect(try await browser.get(sent.headers[.location]!).text.contains("A password reset mail is queued"))
            #expect(try await Self.mails(to: email, server).map(\.purpose).sorted() == ["reset", "verify"])
            #expect(
                try await server.services.audit.events(AuditQuery(action: AuditAction.userPasswordReset)).first?.target == "user \(device.userID)")
        }
    }

    @Test func theUsersPageShowsSessionsWithTheirMethodAndRecentAuditEvents() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let device = try await client.registerDevice()
            _ = try await client.registerAgain(device)
            _ = try await browser.submit("/admin/users/\(device.userID)/budget", from: "/admin/users/\(device.userID)", [("limit", "9")])
            let page = try await browser.get("/admin/users/\(device.userID)").text
            #expect(page.matches(of: /<td class="method">device<\/td>/).count == 2)
            #expect(page.contains("1 device, 2 live sessions"))
            let day = server.clock.now().formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day())
            #expect(page.contains("<td>\(day)</td>"))
            #expect(page.contains("<code>user.budget.set</code>"))
        }
    }

    @Test func theOutboxListsMailWithoutItsMessageAndRetriesFailedMail() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .support)
            let device = try await client.registerDevice()
            #expect(try await client.register("fay@example.com", "a fine long password", bearer: device.accessToken).status == .created)
            // Once the sender tried it (the relay is not there), so nothing changes it behind the test's back.
            let mail = try await outboxEntry(to: "fay@example.com", in: server) { $0.attempts >= 1 && $0.lastError != nil }
            try await server.services.store.markFailed(id: mail.id, error: "550 mailbox unavailable", retryAt: nil, at: server.clock.now())

            let overview = try await browser.get("/admin").text
            #expect(overview.contains(#"<a href="/admin/outbox""#))
            let page = try await browser.get("/admin/outbox")
            #expect(page.status == .ok)
            for text in ["fay@example.com", "<td>verify</td>", ">failed</td>", "<td>1 attempt</td>", "550 mailbox unavailable", ">Retry</button>"] {
                #expect(page.text.contains(text), "\(text)")
            }
            // Never the message: no code, no link.
            #expect(!page.text.contains("token="))
            #expect(!page.text.contains("Subject") && !page.text.contains("minutes"))

            let retried = try await browser.submit("/admin/outbox/\(mail.id)/retry", from: "/admin/outbox")
            #expect(retried.headers[.location] == "/admin/outbox?done=mail-retried")
            #expect(try await Self.mails(to: "fay@example.com", server).first?.state == "pending")
            #expect(try await server.services.audit.events(AuditQuery(action: AuditAction.outboxRetry)).first?.target == "mail \(mail.id)")
            // A mail that is not failed is left alone.
            let again = try await browser.submit("/admin/outbox/\(mail.id)/retry", from: "/admin/outbox")
            #expect(again.headers[.location] == "/admin/outbox?done=mail-not-failed")
            #expect(try await browser.submit("/admin/outbox/999999/retry", from: "/admin/outbox").status == .notFound)
        }
    }

    @Test func theOutboxIsPagedAndFilteredByState() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .viewer)
            for index in 0..<(AdminRoutes.outboxPageSize + 2) {
                try await server.services.store.queueMail(
                    NewOutboxMail(recipient: "u\(index)@example.com", purpose: .verify, messageID: "m\(index)@latchkey.test", sealedMessage: "x"),
                    at: server.clock.now())
            }
            let first = try await browser.get("/admin/outbox").text
            #expect(first.matches(of: /<tr data-mail-id=/).count == AdminRoutes.outboxPageSize)
            #expect(first.contains("page=2"))
            let second = try await browser.get("/admin/outbox?page=2").text
            #expect(second.matches(of: /<tr data-mail-id=/).count == 2)
            #expect(try await browser.get("/admin/outbox?state=sent").text.contains("No mail."))
        }
    }

    @Test func theUsersListShowsEachUsersFactsAndFilters() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .viewer)
            let one = try await client.registerDevice()
            server.clock.advance(by: 10)
            let two = try await client.registerDevice()
            #expect(try await client.register("gus@example.com", "a fine long password", bearer: two.accessToken).status == .created)
            server.clock.advance(by: 10)
            let three = UUID().uuidString.lowercased()
            _ = try await server.services.store.signIn(
                FederatedIdentity(
                    provider: "apple", subject: "001234.apple", userID: "", email: nil, clientID: nil, sealedRefreshToken: nil,
                    createdAt: server.clock.now()),
                newUserID: three, at: server.clock.now())
            _ = try await server.services.backend.disable(userID: one.userID, by: .commandLine())

            let all = try await browser.get("/admin/users").text
            let rows = all.matches(of: /<tr data-user-id="([^"]+)"/).map { String($0.output.1) }
            #expect(rows == [three, two.userID, one.userID])  // newest first
            #expect(all.contains("<td>gus@example.com</td><td>device</td><td>email</td>"))
            #expect(all.contains("<td>federated</td><td>apple</td>"))
            #expect(all.contains(#"<td class="devices">1 device</td>"#))
            #expect(all.contains(#"<td class="devices">0 devices</td>"#))
            #expect(!all.contains("1 devices"))

            func users(_ query: String) async throws -> [String] {
                try await browser.get("/admin/users?\(query)").text.matches(of: /<tr data-user-id="([^"]+)"/).map { String($0.output.1) }
            }
            #expect(try await users("disabled=true") == [one.userID])
            #expect(try await users("disabled=false") == [three, two.userID])
            #expect(try await users("provider=apple") == [three])
            #expect(try await users("provider=email") == [two.userID])
            #expect(try await users("kind=federated") == [three])
            #expect(try await users("kind=device") == [two.userID, one.userID])
            #expect(try await users("q=001234.apple") == [three])
            #expect(try await users("q=GUS%40example") == [two.userID])
            #expect(try await users("q=\(one.userID)") == [one.userID])
            #expect(try await users("q=\(one.userID)&disabled=false") == [])
        }
    }

    @Test func theUsersListIsPagedByTheDatabase() async throws {
        try await Self.withMailConsole { browser, client, server in
            try await browser.setUp(server, role: .viewer)
            var made: [String] = []
            for _ in 0..<(AdminRoutes.pageSize + 3) {
                made.append(try await client.registerDevice().userID)
                server.clock.advance(by: 1)
            }
            let first = try await browser.get("/admin/users?kind=device").text
            #expect(first.matches(of: /<tr data-user-id=/).count == AdminRoutes.pageSize)
            // The pager keeps the filter.
            #expect(first.contains("/admin/users?kind=device&amp;page=2"))
            let second = try await browser.get("/admin/users?kind=device&page=2").text
            let rest = second.matches(of: /<tr data-user-id="([^"]+)"/).map { String($0.output.1) }
            #expect(rest == Array(made.prefix(3).reversed()))
        }
    }

    @Test(arguments: ["/admin/nothing-here", "/admin/users/not-a-uuid/extra/parts", "/admin/static/missing.css", "/admin/outbox/1"])
    func anUnknownPathAnswersTheConsoles404Page(_ path: String) async throws {
        try await Self.withMailConsole { browser, _, server in
            for signedIn in [false, true] {
                if signedIn { try await browser.setUp(server, role: .viewer) }
                for method in [HTTPRequest.Method.get, .post] {
                    let answer = try await browser.client.execute(
                        uri: path, method: method,
                        headers: signedIn ? [.cookie: browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")] : [:],
                        body: method == .post ? ByteBuffer(string: "csrf=x") : nil)
                    #expect(answer.status == .notFound, "\(method) \(path)")
                    #expect(answer.headers[.contentType] == "text/html; charset=utf-8", "\(method) \(path)")
                    #expect(answer.text.contains("<h1>Not found</h1>"), "\(method) \(path)")
                    #expect(answer.text.contains(#"<nav id="nav">"#) == signedIn, "\(method) \(path)")
                    #expect(answer.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                }
            }
        }
    }

    @Test func theAPIsUnknownPathsKeepTheirJSONEnvelope() async throws {
        try await Self.withMailConsole { browser, client, _ in
            let answer = try await client.send(.get, "/api/v1/nothing-here")
            #expect(answer.status == .notFound)
            #expect(answer.envelope?.error.code == .notFound)
            #expect(try await browser.get("/administrator").headers[.contentType] != "text/html; charset=utf-8")
        }
    }

    @Test func countsAreSingularForOne() {
        #expect(AdminRoutes.count(1, "device") == "1 device")
        #expect(AdminRoutes.count(2, "device") == "2 devices")
        #expect(AdminRoutes.count(0, "device") == "0 devices")
        #expect(AdminRoutes.count(1, "identity", plural: "identities") == "1 identity")
        #expect(AdminRoutes.count(3, "identity", plural: "identities") == "3 identities")
    }
}
