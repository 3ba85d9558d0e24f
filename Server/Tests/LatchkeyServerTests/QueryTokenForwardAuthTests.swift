import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Forward auth for WebSocket clients that put the token in the URL (`GET /api/v1/mcp/daw?token=…`): a rule written
/// with `token=query` takes it from the original URI's `token` parameter, with every check, meter and identity header
/// of a Bearer token; every other rule ignores the query.
@Suite struct QueryTokenForwardAuthTests {
    static let rules = [
        AuthorizationRule("GET /api/v1/mcp bearer mcp token=query")!,
        AuthorizationRule("GET /api/v1/chat bearer")!,
    ]

    static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.authorizationRules = Self.rules
        configuration.limits.trustedProxies = ["127.0.0.1"]
        configuration.meters = ["mcp": Meter(name: "mcp", guestLimit: 1, userLimit: 4)]
    }

    static func withRules<T: Sendable>(_ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T) async throws -> T {
        try await withServer(.live, configure: Self.configure, body)
    }

    /// Asks as nginx does about `GET uri`.
    static func ask(_ client: some TestClientProtocol, _ uri: String, bearer: String? = nil) async throws -> TestResponse {
        try await AuthorizeTests.authorize(client, "GET", uri, bearer: bearer)
    }

    static func identity(_ response: TestResponse) -> [String?] {
        ["X-Latchkey-User-Id", "X-Latchkey-Device-Id", "X-Latchkey-Kind"].map { AuthorizeTests.header(response, $0) }
    }

    @Test func theRuleSyntaxReadsTokenEqualsQueryOnTokenRulesOnly() {
        let expected = AuthorizationRule(method: "GET", pathPrefix: "/api/v1/mcp", auth: .bearer, meter: "mcp", acceptsQueryToken: true)
        #expect(AuthorizationRule("GET /api/v1/mcp bearer mcp token=query") == expected)
        #expect(AuthorizationRule("GET /api/v1/mcp bearer token=query mcp") == expected)
        #expect(AuthorizationRule("GET /api/v1/mcp user token=query")?.acceptsQueryToken == true)
        #expect(AuthorizationRule("GET /api/v1/mcp bearer mcp")?.acceptsQueryToken == false)
        for malformed in [
            "GET /assets device token=query", "GET /public public token=query", "GET /x bearer token=header", "GET /x bearer token=query token=query",
            "GET /x bearer a b",
        ] {
            #expect(AuthorizationRule(malformed) == nil, "\(malformed) was read")
        }
    }

    @Test func aQueryTokenPassesAnOptedInRuleWithTheIdentityABearerTokenGets() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            let byBearer = try await Self.ask(client, "/api/v1/mcp/daw", bearer: user.accessToken)
            let byQuery = try await Self.ask(client, "/api/v1/mcp/daw?token=\(user.accessToken)")
            #expect(byBearer.status == .ok)
            #expect(byQuery.status == .ok)
            #expect(AuthorizeTests.header(byQuery, "X-Latchkey-User-Id") == user.userID)
            #expect(Self.identity(byQuery) == Self.identity(byBearer))
        }
    }

    @Test func aQueryTokenOnARuleThatDidNotOptInIsNotRead() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            let response = try await Self.ask(client, "/api/v1/chat?token=\(user.accessToken)")
            expectUnauthorized(response)
            #expect(response.headers[.wwwAuthenticate] == #"Bearer realm="latchkey""#)  // no credential was read
        }
    }

    @Test func aForgedOrExpiredQueryTokenIs401() async throws {
        try await Self.withRules { client, server async throws in
            let user = try await client.registerDevice()
            let forged = try Forge.flippingSignatureBit(user.accessToken)
            expectUnauthorized(try await Self.ask(client, "/api/v1/mcp/daw?token=\(forged)"))
            expectUnauthorized(try await Self.ask(client, "/api/v1/mcp/daw?token=\(try Forge.algNone(user.accessToken))"))
            server.clock.advance(by: 901)
            expectUnauthorized(try await Self.ask(client, "/api/v1/mcp/daw?token=\(user.accessToken)"))
        }
    }

    @Test func aRuleThatTakesQueryTokensStillNeedsOne() async throws {
        try await Self.withRules { client, _ async throws in
            let missing = try await Self.ask(client, "/api/v1/mcp/daw?other=1")
            expectUnauthorized(missing)
            #expect(missing.envelope?.error.message.contains("token query parameter") == true)
            expectUnauthorized(try await Self.ask(client, "/api/v1/mcp/daw?token="))
        }
    }

    @Test func bearerAndQueryTokensCountOnTheSameMeter() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            for remaining in (0..<4).reversed() {
                let bearer = remaining.isMultiple(of: 2) ? user.accessToken : nil
                let uri = bearer == nil ? "/api/v1/mcp/daw?token=\(user.accessToken)" : "/api/v1/mcp/daw"
                let response = try await Self.ask(client, uri, bearer: bearer)
                #expect(response.status == .ok)
                #expect(AuthorizeTests.header(response, "X-RateLimit-Remaining") == String(remaining))
            }
            let fifth = try await Self.ask(client, "/api/v1/mcp/daw?token=\(user.accessToken)")
            #expect(fifth.status == .tooManyRequests)
            #expect(AuthorizeTests.header(fifth, "Retry-After") != nil)
        }
    }

    @Test func aPercentEncodedQueryTokenIsDecoded() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            // Every byte escaped, among other parameters.
            let encoded = user.accessToken.utf8.map { String(format: "%%%02X", $0) }.joined()
            let response = try await Self.ask(client, "/api/v1/mcp/daw?session=7&%74oken=\(encoded)&x=%2F")
            #expect(response.status == .ok)
            #expect(AuthorizeTests.header(response, "X-Latchkey-User-Id") == user.userID)
        }
    }

    @Test func aRepeatedTokenParameterOrAnUnreadableQueryIs400() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            for uri in ["/api/v1/mcp/daw?token=\(user.accessToken)&token=\(user.accessToken)", "/api/v1/mcp/daw?token=\(user.accessToken)&%zz=1"] {
                let response = try await Self.ask(client, uri)
                #expect(response.status == .badRequest)
                #expect(response.envelope?.error.code == .invalidHeader)
                #expect(response.envelope?.error.message.contains(user.accessToken) == false)
            }
        }
    }

    @Test func anAuthorizationHeaderIsCheckedInsteadOfTheQuery() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            let forged = try Forge.flippingSignatureBit(user.accessToken)
            expectUnauthorized(try await Self.ask(client, "/api/v1/mcp/daw?token=\(user.accessToken)", bearer: forged))
            #expect(try await Self.ask(client, "/api/v1/mcp/daw?token=\(forged)", bearer: user.accessToken).status == .ok)
        }
    }

    @Test func noLogLineContainsAQueryToken() async throws {
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger(), configure: Self.configure)
        let tokens = try await server.test(.live) { client in
            let user = try await client.registerDevice()
            let forged = try Forge.flippingSignatureBit(user.accessToken)
            #expect(try await Self.ask(client, "/api/v1/mcp/daw?token=\(user.accessToken)").status == .ok)
            #expect(try await Self.ask(client, "/api/v1/mcp/daw?token=\(forged)").status == .unauthorized)
            #expect(try await Self.ask(client, "/api/v1/chat?token=\(user.accessToken)").status == .unauthorized)
            #expect(try await Self.ask(client, "/api/v1/mcp/daw?token=\(forged)&token=\(forged)").status == .badRequest)
            return [user.accessToken, forged]
        }
        let requestLines = capture.lines.filter { $0.message == "request" && $0.metadata["path"] == "/api/v1/authorize" }
        #expect(requestLines.count == 4)
        let needles = tokens + tokens.compactMap { $0.split(separator: ".").last.map(String.init) }
        for line in capture.lines {
            for needle in needles where line.rendered.contains(needle) {
                Issue.record("a log line contains a query token (\(needle.prefix(12))…): \(line.message) [\(line.metadata.keys.sorted())]")
            }
        }
    }
}
