import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 30, item 9: a 401 of the app's own API rotates the session only when it says the token is the problem.
@Suite struct AppAPIUnauthorizedTests {
    static let me = URL(string: "https://api.example.com/v1/me")!

    /// A fixture whose app API answers 401 with `challenge` to `access-1` and 200 to any other token; refreshes give `access-2`.
    static func fixture(challenge: String?, clock: ManualLatchkeyClock = ManualLatchkeyClock(), advancing: TimeInterval = 0) -> Fixture {
        Fixture(clock: clock) { request in
            if request.url.path == "/api/v1/auth/refresh" { return .json(200, Samples.pair(2)) }
            guard request.bearer == "access-1" else { return TransportResponse(status: 200) }
            clock.advance(by: advancing)  // the time the request took
            return TransportResponse(status: 401, headers: challenge.map { ["WWW-Authenticate": $0] } ?? [:], body: Data(#"{"detail":"no"}"#.utf8))
        }
    }

    static func session(_ fixture: Fixture) -> LatchkeySession {
        fixture.session { $0.apiOrigins = [URL(string: "https://api.example.com")!] }
    }

    @Test(arguments: [
        nil, #"Bearer error="insufficient_scope""#, #"Bearer realm="api""#, #"Basic realm="error=\"invalid_token\"""#,
        #"Basic error="invalid_token""#, #"Bearer error="invalid_token_type""#, #"Bearer realm="error=invalid_token", scope="a""#,
    ])
    func aRefusalForAnotherReasonIsHandedBackAndTheSessionIsKept(challenge: String?) async throws {
        let fixture = Self.fixture(challenge: challenge)
        try fixture.storeSession()
        let session = Self.session(fixture)
        let (body, response) = try await session.data(for: URLRequest(url: Self.me), policy: .bearer)
        #expect(response.statusCode == 401)
        #expect(String(decoding: body, as: UTF8.self) == #"{"detail":"no"}"#)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
        #expect(fixture.transport.requests(to: "/v1/me").count == 1)
        #expect(try await session.accessToken() == "access-1")
    }

    @Test(arguments: [
        #"Bearer error="invalid_token""#, #"bearer ERROR=invalid_token"#,
        #"BEARER realm="api", error="invalid_token", error_description="The token expired""#,
        #"Basic realm="x", Bearer realm="api", error="invalid_token""#, #"Newauth realm="a, b", title="\"x\"", Bearer error="invalid_token""#,
        #"Basic dXNlcjpwYXNz==, Bearer error = "invalid_token""#, #", Bearer   error="invalid_token" ,"#,
    ])
    func anInvalidTokenChallengeRefreshesAndRetriesOnce(challenge: String) async throws {
        let fixture = Self.fixture(challenge: challenge)
        try fixture.storeSession()
        let (_, response) = try await Self.session(fixture).data(for: URLRequest(url: Self.me), policy: .bearer)
        #expect(response.statusCode == 200)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(fixture.transport.requests(to: "/v1/me").map(\.bearer) == ["access-1", "access-2"])
    }

    @Test func aTokenThatReachedTheSkewWindowInFlightIsRefreshedWithoutAChallenge() async throws {
        let clock = ManualLatchkeyClock()
        // 310 s left when sent (outside the 300 s skew); the request takes 20 s, so the 401 finds it inside.
        let fixture = Self.fixture(challenge: nil, clock: clock, advancing: 20)
        try fixture.storeSession(lifetime: 310)
        let (_, response) = try await Self.session(fixture).data(for: URLRequest(url: Self.me), policy: .bearer)
        #expect(response.statusCode == 200)
        #expect(fixture.transport.requests(to: "/v1/me").map(\.bearer) == ["access-1", "access-2"])
    }

    @Test func aStreamedBodysRefusalFollowsTheSameRule() async throws {
        let fixture = Self.fixture(challenge: nil)
        try fixture.storeSession()
        let (_, response) = try await Self.session(fixture).bytes(for: URLRequest(url: Self.me), policy: .bearer)
        #expect(response.statusCode == 401)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
    }

    @Test func aBare401FromTheLatchkeyServerStillRefreshes() async throws {
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/refresh" { return .json(200, Samples.pair(2)) }
            return request.bearer == "access-1" ? TransportResponse(status: 401) : TransportResponse(status: 200)
        }
        try fixture.storeSession()
        let url = Fixture.serverURL.appendingPathComponent("api/v1/compose/stream")
        let (_, response) = try await fixture.session().data(for: URLRequest(url: url), policy: .bearer)
        #expect(response.statusCode == 200)
        #expect(fixture.transport.requests(to: "/api/v1/compose/stream").map(\.bearer) == ["access-1", "access-2"])
    }
}
