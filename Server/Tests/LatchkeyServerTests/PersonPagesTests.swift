import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The pages a person opens from a mail's link (verify, reset) and the answers to their forms: they carry
/// `email.app-name`, show the address in Unicode, and can be replaced from `email.templates`.
@Suite struct PersonPagesTests {
    static let password = "correct horse battery staple"
    static let appName = "Notes & <Co>"

    /// A live server mailing through the peer, with `email.app-name` set (and `email.templates` when given).
    static func withPages(
        templates: [String: String] = [:], _ body: @Sendable @escaping (any TestClientProtocol, TestServer, SMTPPeer) async throws -> Void
    ) async throws {
        let peer = try await SMTPPeer.shared()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, text) in templates { try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.email.appName = Self.appName
            if !templates.isEmpty { configuration.email.templatesDirectory = directory.path }
        }
        try await server.test(.live) { client in try await body(client, server, peer) }
    }

    /// A fresh address at an internationalised domain: as typed (Unicode) and as stored and mailed (Punycode).
    static func idnAddress() -> (typed: String, mailed: String) {
        let local = "ann+" + UUID().uuidString.prefix(8).lowercased()
        return (local + "@bücher.example", local + "@xn--bcher-kva.example")
    }

    static func expectPageHeaders(_ page: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(page.headers[.contentType]?.hasPrefix("text/html") == true, sourceLocation: sourceLocation)
        #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY", sourceLocation: sourceLocation)
        #expect(page.headers[.cacheControl] == "no-store", sourceLocation: sourceLocation)
    }

    @Test func theVerifyPagesCarryTheAppNameAndTheAddressInUnicode() async throws {
        try await Self.withPages { client, server, peer in
            let address = Self.idnAddress()
            #expect(try await client.register(address.typed, Self.password).status == .created)
            let token = try await peer.mail(to: address.mailed).token

            let page = try await client.send(.get, "/api/v1/auth/verify-email?token=\(token)")
            #expect(page.status == .ok)
            Self.expectPageHeaders(page)
            #expect(page.text.contains(address.typed))
            #expect(!page.text.contains("xn--"))
            #expect(page.text.contains("Notes &amp; &lt;Co&gt;"))
            #expect(!page.text.contains(Self.appName))
            #expect(page.text.contains("<title>"))

            let verified = try await client.postForm("/api/v1/auth/verify-email/form", ["token": token])
            #expect(verified.status == .ok)
            Self.expectPageHeaders(verified)
            #expect(verified.text.contains(address.typed))
            #expect(!verified.text.contains("xn--"))
            #expect(verified.text.contains("Notes &amp; &lt;Co&gt;"))
        }
    }

    @Test func theResetPagesCarryTheAppNameAndTheAddressInUnicode() async throws {
        try await Self.withPages { client, server, peer in
            let address = Self.idnAddress()
            #expect(try await client.register(address.typed, Self.password).status == .created)
            #expect(try await client.verify(address.typed, code: try await peer.mail(to: address.mailed).code).status == .ok)
            server.clock.advance(by: 61)
            let requested = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: address.typed))
            #expect(requested.status == .accepted)
            let token = try #require(try await peer.mails(to: address.mailed, count: 2).last).token

            let page = try await client.send(.get, "/api/v1/auth/reset-password?token=\(token)")
            #expect(page.status == .ok)
            Self.expectPageHeaders(page)
            #expect(page.text.contains(address.typed))
            #expect(!page.text.contains("xn--"))
            #expect(page.text.contains("Notes &amp; &lt;Co&gt;"))
            #expect(page.text.contains(#"name="new_password""#))

            let done = try await client.postForm("/api/v1/auth/reset-password/form", ["token": token, "new_password": "a new and long passphrase"])
            #expect(done.status == .ok)
            #expect(done.text.contains(address.typed))
            #expect(done.text.contains("Notes &amp; &lt;Co&gt;"))
            #expect(try await client.login(address.typed, "a new and long passphrase").status == .ok)
        }
    }

    @Test func aLinkThatNamesNoAccountOpensTheErrorPage() async throws {
        try await Self.withPages { client, server, peer in
            for path in ["/api/v1/auth/verify-email?token=made-up", "/api/v1/auth/reset-password?token=made-up"] {
                let page = try await client.send(.get, path)
                #expect(page.status == .badRequest)
                Self.expectPageHeaders(page)
                #expect(page.text.contains("Link not valid"))
                #expect(page.text.contains("Notes &amp; &lt;Co&gt;"))
                #expect(!page.text.contains("<form"))
            }
        }
    }

    @Test func theTemplatesDirectoryReplacesThePagesAndEscapesTheirValues() async throws {
        let templates = [
            "verify-page.html": "<!doctype html><title>[{{app_name}}]</title><p id=\"who\">{{email}}</p>"
                + "<form method=\"post\" action=\"verify-email/form\"><input type=\"hidden\" name=\"token\" value=\"{{token}}\"></form>",
            "verified-page.html": "<p>custom verified {{email}} at {{app_name}}</p>",
            "error-page.html": "<p>custom error: {{title}} / {{message}} / {{app_name}}</p>",
        ]
        try await Self.withPages(templates: templates) { client, server, peer in
            let address = Self.idnAddress()
            #expect(try await client.register(address.typed, Self.password).status == .created)
            let token = try await peer.mail(to: address.mailed).token

            let page = try await client.send(.get, "/api/v1/auth/verify-email?token=\(token)")
            #expect(page.status == .ok)
            #expect(page.text.hasPrefix("<!doctype html><title>[Notes &amp; &lt;Co&gt;]</title>"))
            #expect(page.text.contains("<p id=\"who\">\(address.typed)</p>"))
            #expect(page.text.contains("value=\"\(token)\""))
            let verified = try await client.postForm("/api/v1/auth/verify-email/form", ["token": token])
            #expect(verified.status == .ok)
            #expect(verified.text == "<p>custom verified \(address.typed) at Notes &amp; &lt;Co&gt;</p>")
            let again = try await client.postForm("/api/v1/auth/verify-email/form", ["token": token])
            #expect(again.status == .badRequest)
            #expect(again.text.hasPrefix("<p>custom error: Link not valid / "))
            // A page the directory does not hold keeps the built-in one.
            let reset = try await client.send(.get, "/api/v1/auth/reset-password")
            #expect(reset.status == .badRequest)
            #expect(reset.text.contains("custom error: Link incomplete"))
        }
    }
}
