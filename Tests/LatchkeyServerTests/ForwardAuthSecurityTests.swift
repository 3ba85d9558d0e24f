import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Forward auth decides on the path the proxy saw, read only from the proxy, in the one form the app will read it.
@Suite struct ForwardAuthSecurityTests {
    @available(LatchkeyServer 1.0, *)
    static let rules = [
        AuthorizationRule(method: "GET", pathPrefix: "/public", auth: .public),
        AuthorizationRule(method: "*", pathPrefix: "/api/edit", auth: .bearer),
        AuthorizationRule(method: "*", pathPrefix: "/api/account", auth: .user),
    ]

    @available(LatchkeyServer 1.0, *)
    static func withProxy<T: Sendable>(
        trusted: Set<String> = ["127.0.0.1"], proxy: ForwardAuthProxy = .nginx, _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.authorizationRules = Self.rules
                configuration.authorizeProxy = proxy
                configuration.limits.trustedProxies = trusted
            }
        ) { client, _ in try await body(client) }
    }

    @available(LatchkeyServer 1.0, *)
    static func ask(_ client: some TestClientProtocol, _ fields: [(String, String)], bearer: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return try await client.send(.get, "/api/v1/authorize", bearer: bearer, headers: headers)
    }

    @available(LatchkeyServer 1.0, *)
    static func nginx(_ uri: String, method: String = "GET") -> [(String, String)] { [("X-Original-Method", method), ("X-Original-URI", uri)] }

    @available(LatchkeyServer 1.0, *)
    @Test func aPeerThatIsNotATrustedProxyIsRefused() async throws {
        try await Self.withProxy(trusted: ["10.0.0.2"]) { client in
            let response = try await Self.ask(client, Self.nginx("/public/terms"))
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.message.contains("trusted-proxies") == true)
        }
    }

    @available(LatchkeyServer 1.0, *)
    @Test func behindTraefikAClientsOwnXOriginalHeadersAreNotRead() async throws {
        try await Self.withProxy(proxy: .traefik) { client in
            // Traefik forwards the client's headers: a client adds X-Original-URI naming a public path.
            let response = try await Self.ask(
                client,
                [("X-Original-Method", "GET"), ("X-Original-URI", "/public/x"), ("X-Forwarded-Method", "GET"), ("X-Forwarded-Uri", "/api/account")])
            #expect(response.status == .unauthorized)
        }
    }

    @available(LatchkeyServer 1.0, *)
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
    @available(LatchkeyServer 1.0, *)
    func anotherSpellingOfAProtectedPathGetsThatPathsRule(uri: String) async throws {
        try await Self.withProxy { client in
            // /api/account needs a signed-in user: whatever the spelling, no token is 401, never a public pass.
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .unauthorized, "\(uri) answered \(response.status)")
        }
    }

    @available(LatchkeyServer 1.0, *)
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

    @Test(arguments: ["/api/a%zz", "/api\\account", "api/account", "/api/%"])
    @available(LatchkeyServer 1.0, *)
    func anUnreadablePathIs400(uri: String) async throws {
        try await Self.withProxy { client in
            let response = try await Self.ask(client, Self.nginx(uri))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
        }
    }
}
