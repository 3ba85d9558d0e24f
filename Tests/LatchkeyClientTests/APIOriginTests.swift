import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 30, item 1: credentials go only to the Latchkey server and `Configuration.apiOrigins`.
@Suite struct APIOriginTests {
    static let api = URL(string: "https://api.example.com")!

    static func apiOnly(_ configuration: inout LatchkeySession.Configuration) { configuration.apiOrigins = [Self.api] }

    static let credentialPolicies: [AuthPolicy] = AuthPolicy.allCases.filter { $0 != .none }

    /// A fixture with a session whose token is about to expire (so a request would refresh first) and a stub that answers 200.
    static func expiringFixture() throws -> Fixture {
        let fixture = Fixture { _ in TransportResponse(status: 200) }
        try fixture.storeSession(lifetime: 60)
        return fixture
    }

    @Test(arguments: credentialPolicies)
    func aCredentialPolicyToAnUnlistedOriginThrowsAndSendsNothing(policy: AuthPolicy) async throws {
        let fixture = try Self.expiringFixture()
        let session = fixture.session(Self.apiOnly)
        let avatar = URLRequest(url: URL(string: "https://cdn.example.net/avatars/1.png")!)
        await #expect(throws: LatchkeyError.self) { try await session.data(for: avatar, policy: policy) }
        await #expect(throws: LatchkeyError.self) { try await session.bytes(for: avatar, policy: policy) }
        var authorized = avatar
        await #expect(throws: LatchkeyError.self) { try await session.authorize(&authorized, policy: policy) }
        #expect(authorized.allHTTPHeaderFields?.isEmpty ?? true)
        #expect(authorized.url == avatar.url)
        #expect(fixture.transport.requests.isEmpty)  // not even the refresh the expiring token would need
    }

    @Test func theRefusalSaysWhichOriginAndWhatToDo() async throws {
        let fixture = try Self.expiringFixture()
        let session = fixture.session(Self.apiOnly)
        do {
            _ = try await session.data(for: URLRequest(url: URL(string: "https://cdn.example.net/a.png?token=secret")!), policy: .bearer)
            Issue.record("the request was sent")
        } catch let error as LatchkeyError {
            guard case .invalidRequest(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("https://cdn.example.net:443"))
            #expect(reason.contains("apiOrigins"))
            #expect(!reason.contains("secret") && !reason.contains("access-1"))
        }
    }

    @Test(arguments: [
        "https://api.example.com.evil.net/v1/me", "https://evil.net/api.example.com/v1/me", "https://api.example.com@evil.net/v1/me",
        "https://evilapi.example.com/v1/me", "https://example.com/v1/me", "http://api.example.com/v1/me", "https://api.example.com:8443/v1/me",
        "wss://api.example.com/v1/me",
    ])
    func originsThatOnlyLookLikeAListedOneAreRefused(url: String) async throws {
        let fixture = try Self.expiringFixture()
        await #expect(throws: LatchkeyError.self) {
            try await fixture.session(Self.apiOnly).data(for: URLRequest(url: URL(string: url)!), policy: .bearer)
        }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test(arguments: ["https://api.example.com/v1/me", "HTTPS://API.Example.COM/v1/me", "https://api.example.com:443/v1/me"])
    func theSameOriginInAnotherSpellingIsAccepted(url: String) async throws {
        let fixture = Fixture { _ in TransportResponse(status: 200) }
        try fixture.storeSession()
        let session = fixture.session { $0.apiOrigins = [URL(string: "https://API.example.com:443/ignored/path")!] }
        #expect(try await session.data(for: URLRequest(url: URL(string: url)!), policy: .bearer).1.statusCode == 200)
        #expect(fixture.transport.requests.map(\.bearer) == ["access-1"])
    }

    @Test(arguments: ["http://127.0.0.1:9000", "http://127.8.9.10:9000", "http://localhost:3000", "http://LOCALHOST:3000", "http://[::1]:8080"])
    func plainHTTPCarriesCredentialsToAListedLoopbackHost(origin: String) async throws {
        let fixture = Fixture { _ in TransportResponse(status: 200) }
        try fixture.storeSession()
        let session = fixture.session { $0.apiOrigins = [URL(string: origin)!] }
        _ = try await session.data(for: URLRequest(url: URL(string: origin + "/v1/me")!), policy: .bearer)
        #expect(fixture.transport.requests.map(\.bearer) == ["access-1"])
    }

    @Test(arguments: ["http://192.168.1.20:8080", "http://10.0.0.5", "http://api.example.com", "http://128.0.0.1", "http://localhost.evil.net"])
    func plainHTTPToAnyOtherHostIsRefusedEvenWhenListed(origin: String) async throws {
        let fixture = try Self.expiringFixture()
        let session = fixture.session { $0.apiOrigins = [URL(string: origin)!] }
        await #expect(throws: LatchkeyError.self) { try await session.data(for: URLRequest(url: URL(string: origin + "/v1/me")!), policy: .bearer) }
        await #expect(throws: LatchkeyError.self) {
            try await session.data(for: URLRequest(url: URL(string: origin + "/assets")!), policy: .deviceID)
        }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aWebSocketToAListedOriginMayCarryTheTokenInItsQuery() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session(Self.apiOnly)
        var socket = URLRequest(url: URL(string: "wss://api.example.com/api/v1/mcp/daw")!)
        try await session.authorize(&socket, policy: .tokenInQuery)
        #expect(socket.url?.absoluteString == "wss://api.example.com/api/v1/mcp/daw?token=access-1")
        var elsewhere = URLRequest(url: URL(string: "wss://evil.net/api/v1/mcp/daw")!)
        await #expect(throws: LatchkeyError.self) { try await session.authorize(&elsewhere, policy: .tokenInQuery) }
        var clear = URLRequest(url: URL(string: "ws://api.example.com/api/v1/mcp/daw")!)
        await #expect(throws: LatchkeyError.self) { try await session.authorize(&clear, policy: .tokenInQuery) }
        #expect(elsewhere.url?.query == nil && clear.url?.query == nil)
    }

    @Test func theNonePolicyGoesAnywhereWithoutCredentials() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 200) }
        try fixture.storeSession()
        var request = URLRequest(url: URL(string: "http://192.168.1.20:8080/avatar.png")!)
        request.setValue("kept", forHTTPHeaderField: "X-App")
        _ = try await fixture.session(Self.apiOnly).data(for: request, policy: .none)
        #expect(fixture.transport.requests.count == 1)
        #expect(fixture.transport.requests.first?.bearer == nil)
        #expect(fixture.transport.requests.first?.header("X-Device-ID") == nil)
        #expect(fixture.transport.requests.first?.header("X-App") == "kept")
    }

    @Test func theLatchkeyServersOwnOriginIsAlwaysIncluded() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 200) }
        try fixture.storeSession()
        let session = fixture.session()  // no apiOrigins
        let url = Fixture.serverURL.appendingPathComponent("api/v1/compose/stream")
        _ = try await session.data(for: URLRequest(url: url), policy: .bearer)
        #expect(fixture.transport.requests.map(\.bearer) == ["access-1"])
    }

    @Test func aDPoPNonceIsKeptOnlyFromTheLatchkeyServer() async throws {
        let fixture = Fixture { request in
            let nonce = request.url.host == "api.example.com" ? "nonce-from-the-api" : "nonce-from-latchkey"
            return TransportResponse(status: 200, headers: ["DPoP-Nonce": nonce])
        }
        try fixture.storeSession()
        let session = fixture.session(Self.apiOnly)
        let nonceKey = "latchkey.device-id.dpop-nonce"
        _ = try await session.data(for: URLRequest(url: Self.api.appendingPathComponent("v1/me")), policy: .bearer)
        #expect(fixture.defaults.string(forKey: nonceKey) == nil)
        _ = try await session.send(.get("/api/v1/health", auth: .none))
        #expect(fixture.defaults.string(forKey: nonceKey) == "nonce-from-latchkey")
        _ = try await session.data(for: URLRequest(url: Self.api.appendingPathComponent("v1/me")), policy: .bearer)
        #expect(fixture.defaults.string(forKey: nonceKey) == "nonce-from-latchkey")
    }
}
