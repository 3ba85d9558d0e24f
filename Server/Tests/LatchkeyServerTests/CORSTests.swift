import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Issue 29, "Browsers": `http.cors.allowed-origins` answers preflights and adds the CORS headers to API answers for
/// exact origins only, never with credentials; the console never sends CORS headers.
@Suite struct CORSTests {
    static let app = "https://app.example.com"

    static func preflight(_ client: any TestClientProtocol, _ path: String, origin: String) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .options,
            headers: [.origin: origin, .accessControlRequestMethod: "POST", .accessControlRequestHeaders: "authorization, content-type"],
            body: nil)
    }

    @Test(arguments: Transport.allCases)
    func anAllowedOriginsPreflightIsAnsweredWithoutCredentials(transport: Transport) async throws {
        try await withServer(transport, configure: { $0.corsAllowedOrigins = [Self.app] }) { client, _ in
            let response = try await Self.preflight(client, "/api/v1/auth/register-device", origin: Self.app)
            #expect(response.status == .noContent)
            #expect(response.headers[.accessControlAllowOrigin] == Self.app)
            #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
            #expect(response.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
            #expect(response.headers[.accessControlAllowCredentials] == nil)
            #expect(response.headers[.vary] == "Origin")
        }
    }

    @Test func anAllowedOriginsAnswerCarriesTheOriginAndExposedHeaders() async throws {
        try await withServer(.live, configure: { $0.corsAllowedOrigins = [Self.app, "http://localhost:5173"] }) { client, _ in
            let response = try await client.send(
                .post, "/api/v1/auth/register-device", json: #"{"device_id":"\#(UUID().uuidString)"}"#, headers: [.origin: "http://localhost:5173"])
            #expect(response.status == .created)
            #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:5173")
            #expect(response.headers[.accessControlExposeHeaders]?.contains("WWW-Authenticate") == true)
            #expect(response.headers[.accessControlAllowCredentials] == nil)
            // A refusal is readable too.
            let refused = try await client.send(.get, "/api/v1/auth/me", headers: [.origin: Self.app])
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.accessControlAllowOrigin] == Self.app)
        }
    }

    @Test func anotherOriginGetsNoCORSHeader() async throws {
        try await withServer(.router, configure: { $0.corsAllowedOrigins = [Self.app] }) { client, _ in
            for origin in ["https://evil.example.com", "https://app.example.com.evil.com", "http://app.example.com", "null"] {
                let preflight = try await Self.preflight(client, "/api/v1/auth/register-device", origin: origin)
                #expect(preflight.headers[.accessControlAllowOrigin] == nil, "\(origin)")
                #expect(preflight.status != .noContent, "\(origin)")
                let answer = try await client.send(.get, "/api/v1/health", headers: [.origin: origin])
                #expect(answer.headers[.accessControlAllowOrigin] == nil, "\(origin)")
            }
        }
    }

    @Test func noOriginsByDefaultMeansNoCORSHeaderEver() async throws {
        try await withServer(.router) { client, _ in
            let preflight = try await Self.preflight(client, "/api/v1/auth/register-device", origin: Self.app)
            #expect(preflight.headers[.accessControlAllowOrigin] == nil)
            let answer = try await client.send(.get, "/api/v1/health", headers: [.origin: Self.app])
            #expect(answer.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func theConsoleNeverSendsCORSHeaders() async throws {
        try await withServer(
            .router,
            configure: {
                $0.corsAllowedOrigins = [Self.app]
                $0.admin.enabled = true
            }
        ) { client, _ in
            let page = try await client.execute(uri: "/admin/login", method: .get, headers: [.origin: Self.app], body: nil)
            #expect(page.headers[.accessControlAllowOrigin] == nil)
            let preflight = try await Self.preflight(client, "/admin/login", origin: Self.app)
            #expect(preflight.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func anOriginThatIsNotAnOriginIsRefusedAtStart() async throws {
        for bad in ["*", "https://app.example.com/", "app.example.com", "https://app.example.com/path"] {
            var configuration = LatchkeyConfiguration()
            configuration.corsAllowedOrigins = [bad]
            #expect(throws: LatchkeyConfigurationError.self, "\(bad)") { try LatchkeyServices.validate(configuration) }
        }
    }
}
