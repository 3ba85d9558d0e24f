import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Forward auth decides on the path the proxy saw, read only from the proxy, in the one form the app will read it.
@Suite struct ForwardAuthSecurityTests {
    static let rules = [
        AuthorizationRule(method: "GET", pathPrefix: "/public", auth: .public),
        AuthorizationRule(method: "*", pathPrefix: "/api/edit", auth: .bearer),
        AuthorizationRule(method: "*", pathPrefix: "/api/account", auth: .user),
    ]

    static func withProxy<T: Sendable>(
        trusted: Set<String> = ["127.0.0.1"], proxy: ForwardAuthProxy = .nginx, rules: [AuthorizationRule] = Self.rules,
        caseSensitive: Bool = false, _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.authorizationRules = rules
                configuration.authorizeProxy = proxy
                configuration.authorizeCaseSensitive = caseSensitive
                configuration.limits.trustedProxies = trusted
            }
        ) { client, _ in try await body(client) }
    }

    /// The rules of an app that is public but for its account routes: a path that escapes `/api/account` is public.
    static let publicButTheAccount = [
        AuthorizationRule(method: "*", pathPrefix: "/api/account", auth: .user), AuthorizationRule(method: "*", pathPrefix: "/", auth: .public),
    ]

    static func ask(_ client: some TestClientProtocol, _ fields: [(String, String)], bearer: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return try await client.send(.get, "/api/v1/authorize", bearer: bearer, headers: headers)
    }

    static func nginx(_ uri: String, method: String = "GET") -> [(String, String)] { [("X-Original-Method", method), ("X-Original-URI", uri)] }

    @Test func aPeerThatIsNotATrustedProxyIsRefused() async throws {
        try await Self.withProxy(trusted: ["10.0.0.2"]) { client in
            let response = try await Self.ask(client, Self.nginx("/public/terms"))
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.message.contains("trusted-proxies") == true)
        }
    }

    @Test func behindTraefikAClientsOwnXOriginalHeadersAreNotRead() async throws {
        try await Self.withProxy(proxy: .traefik) { client in
            // Traefik forwards the client's headers: a client adds X-Original-URI naming a public path.
            let response = try await Self.ask(
                client,
                [("X-Original-Method", "GET"), ("X-Original-URI", "/public/x"), ("X-Forwarded-Method", "GET"), ("X-Forwarded-Uri", "/api/account")])
            #expect(response.status == .unauthorized)
        }
    }

    @Test func aDuplicatedOriginalHeaderIsRefused() async throws {
        try await Self.withProxy { client in
            let response = try await Self.ask(
                client, [("X-Original-Method", "GET"), ("X-Original-URI", "/public/x"), ("X-Original-URI", "/api/account")])
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
        }
    }

    @Test(arguments: [
        "/public/../api/account", "/public/%2e%2e/api/account", "/public/%2E%2E/api/account", "/public/./../api/account",
        "/public/..;/api/account", "//api/account", "/api//account", "/api/./account", "/%61pi/account", "/api/acc%6Funt",
    ])
    func anotherSpellingOfAProtectedPathGetsThatPathsRule(uri: String) async throws {
        try await Self.withProxy { client in
            // /api/account needs a signed-in user: whatever the spelling, no token is 401, never a public pass.
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .unauthorized, "\(uri) answered \(response.status)")
        }
    }

    @Test func prefixesMatchWholeSegments() async throws {
        try await Self.withProxy { client in
            let user = try await client.registerDevice()
            #expect(try await Self.ask(client, Self.nginx("/api/edit/42"), bearer: user.accessToken).status == .ok)
            #expect(try await Self.ask(client, Self.nginx("/api/edit?draft=1"), bearer: user.accessToken).status == .ok)
            // /api/editor is another route: no rule covers it.
            #expect(try await Self.ask(client, Self.nginx("/api/editor"), bearer: user.accessToken).status == .forbidden)
            #expect(try await Self.ask(client, Self.nginx("/publicity"), bearer: user.accessToken).status == .forbidden)
        }
    }

    @Test(arguments: [
        "/api/a%zz", "/api\\account", "api/account", "/api/%", "/api%2Faccount", "/api%2faccount%2Fme", "/public/..%2Fapi/account",
        "/public/..%2fapi%2faccount", "/api%5Caccount", "/public/..%5capi/account", "/api/account%00", "/api%2F..%2Fapi/account",
    ])
    func anUnreadablePathIs400(uri: String) async throws {
        try await Self.withProxy { client in
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
        }
    }

    @Test(arguments: ["/api%2Faccount", "/public/..%2Fapi/account", "/api%5Caccount", "/x/..%2F..%2Fapi/account"])
    func anEncodedSlashOrBackslashIsNeverAdmittedAsPublic(uri: String) async throws {
        // nginx passes $request_uri on as sent, and decodes %2F for the upstream: /api%2Faccount is served as /api/account.
        try await Self.withProxy(rules: Self.publicButTheAccount) { client in
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .badRequest, "\(uri) answered \(response.status)")
            #expect(response.envelope?.error.code == .invalidHeader)
        }
    }

    @Test(arguments: ["/API/account", "/Api/Account/me", "/api/ACCOUNT", "/%41PI/account"])
    func byDefaultAPathInAnotherCaseGetsThatPathsRule(uri: String) async throws {
        // An app that routes case-insensitively (Express's default, ASP.NET) serves /API/account as /api/account.
        try await Self.withProxy(rules: Self.publicButTheAccount) { client in
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .unauthorized, "\(uri) answered \(response.status)")
            let user = try await client.registerDevice()
            let admitted = try await Self.ask(client, Self.nginx(uri), bearer: user.accessToken)
            #expect(admitted.status == .ok && admitted.headers[HTTPField.Name("X-Latchkey-User-Id")!] == user.userID)
        }
    }

    @Test func withCaseSensitiveRoutingAPathInAnotherCaseIsAnotherRoute() async throws {
        try await Self.withProxy(rules: Self.publicButTheAccount, caseSensitive: true) { client in
            let exact = try await Self.ask(client, Self.nginx("/api/account"))
            #expect(exact.status == .unauthorized)
            // The app routes case for case: /API/account is none of its account routes, so the public rule decides.
            let otherCase = try await Self.ask(client, Self.nginx("/API/account"))
            #expect(otherCase.status == .ok)
        }
    }

    /// `authorize.case-sensitive` is read from the configuration (file, environment or flag) like every other setting.
    @Test(arguments: [true, false])
    func caseSensitivityIsReadFromTheSettings(caseSensitive: Bool) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"authorize": {"case-sensitive": \#(caseSensitive)}, "tokens": {"dpop": "bound"}}"#.utf8).write(to: file)
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(configuration.authorizeCaseSensitive == caseSensitive)
        #expect(configuration.invalidSettings.isEmpty)
    }
}
