import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `GET /api/v1/authorize`, the forward-auth endpoint for proxies.
///
/// It answers only the proxies in `limits.trusted-proxies`: these tests reach it over a real socket from 127.0.0.1.
@Suite struct AuthorizeTests {
    static let rules = [
        AuthorizationRule(method: "GET", pathPrefix: "/public", auth: .public),
        AuthorizationRule(method: "GET", pathPrefix: "/assets", auth: .device),
        AuthorizationRule(method: "POST", pathPrefix: "/api/edit", auth: .bearer, meter: "actions"),
        AuthorizationRule(method: "*", pathPrefix: "/api/account", auth: .user),
    ]

    static func withRules<T: Sendable>(
        proxy: ForwardAuthProxy = .nginx, guestLimit: Int = 5, _ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T
    ) async throws -> T {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.authorizationRules = Self.rules
                configuration.authorizeProxy = proxy
                configuration.limits.trustedProxies = ["127.0.0.1"]
                configuration.meters = ["actions": Meter(name: "actions", guestLimit: guestLimit, userLimit: 0)]
            }, body)
    }

    static func authorize(
        _ client: some TestClientProtocol, _ method: String, _ uri: String, bearer: String? = nil, device: String? = nil, traefik: Bool = false
    ) async throws -> TestResponse {
        var headers: HTTPFields = [
            HTTPField.Name(traefik ? "X-Forwarded-Method" : "X-Original-Method")!: method,
            HTTPField.Name(traefik ? "X-Forwarded-Uri" : "X-Original-URI")!: uri,
        ]
        if let device { headers[HTTPField.Name("X-Device-ID")!] = device }
        return try await client.send(.get, "/api/v1/authorize", bearer: bearer, headers: headers)
    }

    static func header(_ response: TestResponse, _ name: String) -> String? { response.headers[HTTPField.Name(name)!] }

    @Test func aSessionTokenPassesWithItsUserForTheUpstream() async throws {
        try await Self.withRules { client, _ async throws in
            let user = try await client.registerDevice()
            let response = try await Self.authorize(client, "POST", "/api/edit/42?draft=1", bearer: user.accessToken)
            #expect(response.status == .ok)
            #expect(Self.header(response, "X-Latchkey-User-Id") == user.userID)
            #expect(Self.header(response, "X-Latchkey-Kind") == "session")
        }
    }

    @Test func aMissingOrForgedTokenIs401WithWWWAuthenticate() async throws {
        try await Self.withRules { client, _ async throws in
            let missing = try await Self.authorize(client, "POST", "/api/edit")
            #expect(missing.status == .unauthorized)
            #expect(missing.headers[.wwwAuthenticate] != nil)
            #expect(try await Self.authorize(client, "POST", "/api/edit", bearer: "forged.token.value").status == .unauthorized)
        }
    }

    @Test func aGuestIsMeteredPerDeviceAndTheSixthAdmittedRequestIs429() async throws {
        try await Self.withRules { client, _ async throws in
            let device = UUID().uuidString
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: device])
                .decode(GuestSessionResponse.self).accessToken
            for remaining in (0..<5).reversed() {
                let response = try await Self.authorize(client, "POST", "/api/edit", bearer: guest, device: device)
                #expect(response.status == .ok)
                #expect(Self.header(response, "X-Latchkey-Kind") == "guest")
                #expect(Self.header(response, "X-RateLimit-Remaining") == String(remaining))
            }
            let sixth = try await Self.authorize(client, "POST", "/api/edit", bearer: guest, device: device)
            #expect(sixth.status == .tooManyRequests)
            #expect(Self.header(sixth, "Retry-After") != nil)
        }
    }

    @Test func aMeteredGuestWithoutXDeviceIDIs400() async throws {
        try await Self.withRules { client, _ async throws in
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
                .decode(GuestSessionResponse.self).accessToken
            let response = try await Self.authorize(client, "POST", "/api/edit", bearer: guest)
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.message.contains("X-Device-ID") == true)
        }
    }

    @Test func aUserRuleRefusesGuests() async throws {
        try await Self.withRules { client, _ async throws in
            let device = UUID().uuidString
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: device])
                .decode(GuestSessionResponse.self).accessToken
            #expect(try await Self.authorize(client, "DELETE", "/api/account", bearer: guest, device: device).status == .forbidden)
            let user = try await client.registerDevice()
            #expect(try await Self.authorize(client, "DELETE", "/api/account", bearer: user.accessToken).status == .ok)
        }
    }

    @Test func aDeviceRuleNeedsOnlyXDeviceID() async throws {
        try await Self.withRules { client, _ async throws in
            let device = UUID()
            let response = try await Self.authorize(client, "GET", "/assets/kits", device: device.uuidString)
            #expect(response.status == .ok)
            // A device rule vouches for a header the client chose: never presented as a user.
            #expect(Self.header(response, "X-Latchkey-User-Id") == nil)
            #expect(Self.header(response, "X-Latchkey-Device-Id") == device.uuidString.lowercased())
            #expect(Self.header(response, "X-Latchkey-Kind") == "device")
            #expect(try await Self.authorize(client, "GET", "/assets/kits").status == .badRequest)
        }
    }

    @Test func aPublicRuleLetsAnyonePassWithoutIdentity() async throws {
        try await Self.withRules { client, _ async throws in
            let response = try await Self.authorize(client, "GET", "/public/terms")
            #expect(response.status == .ok)
            #expect(Self.header(response, "X-Latchkey-User-Id") == nil)
        }
    }

    @Test func aRouteNoRuleCoversIsRefused() async throws {
        try await Self.withRules { client, _ async throws in
            let response = try await Self.authorize(client, "GET", "/admin")
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.code == .forbidden)
            #expect(try await Self.authorize(client, "GET", "/api/edit").status == .forbidden)  // the rule is for POST
        }
    }

    @Test func traefiksForwardedHeadersWorkToo() async throws {
        try await Self.withRules(proxy: .traefik) { client, _ async throws in
            #expect(try await Self.authorize(client, "GET", "/public/x", traefik: true).status == .ok)
        }
    }

    @Test func withoutTheOriginalRequestHeadersTheAnswerIs400() async throws {
        try await Self.withRules { client, _ async throws in
            let response = try await client.send(.get, "/api/v1/authorize")
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
        }
    }

    @Test func rulesAreReadFromConfigurationAndAMalformedRuleStopsTheServer() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-rules-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"authorize": {"routes": ["POST /api/edit bearer actions", "GET /assets device"]}}"#.write(to: file, atomically: true, encoding: .utf8)
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(
            configuration.authorizationRules == [
                AuthorizationRule(method: "POST", pathPrefix: "/api/edit", auth: .bearer, meter: "actions"),
                AuthorizationRule(method: "GET", pathPrefix: "/assets", auth: .device),
            ])
        await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.make { $0.invalidAuthorizationRules = ["GET assets"] }
        }
        await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.make {
                $0.authorizationRules = [AuthorizationRule(method: "GET", pathPrefix: "/x", auth: .bearer, meter: "nope")]
            }
        }
    }
}
