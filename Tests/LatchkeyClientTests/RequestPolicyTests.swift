import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct RequestPolicyTests {
    func signedIn(_ handler: @escaping StubTransport.Handler = { _ in TransportResponse(status: 200) }) throws -> (Fixture, LatchkeySession, UUID) {
        let fixture = Fixture(handler)
        let deviceID = try fixture.storeSession()
        return (fixture, fixture.session(), deviceID)
    }

    @Test func deviceIDPolicySendsTheDeviceIDAndNeverAnAuthorizationHeader() async throws {
        let (fixture, session, deviceID) = try self.signedIn()
        var request = LatchkeyRequest.get("/api/v1/assets/drum-kits", auth: .deviceID)
        request.headers["authorization"] = "Bearer sneaked-in"
        _ = try await session.send(request)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(sent.header("Authorization") == nil)
    }

    @Test func bearerPolicySendsOnlyTheBearer() async throws {
        let (fixture, session, _) = try self.signedIn()
        _ = try await session.send(.get("/api/v1/users/me", auth: .bearer))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.bearer == "access-1")
        #expect(sent.header("X-Device-ID") == nil)
    }

    @Test func bearerAndDeviceIDPolicySendsBoth() async throws {
        let (fixture, session, deviceID) = try self.signedIn()
        _ = try await session.send(.get("/api/v1/hairstyles", auth: .bearerAndDeviceID))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.bearer == "access-1")
        #expect(sent.header("X-Device-ID") == deviceID.uuidString.lowercased())
    }

    @Test func noneSendsNoCredentials() async throws {
        let (fixture, session, _) = try self.signedIn()
        _ = try await session.send(.get("/api/v1/health", auth: .none))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.headers.isEmpty)
        #expect(sent.url.absoluteString == "https://auth.example.test/api/v1/health")
    }

    @Test func tokenInQueryPutsTheTokenInTheURLOnly() async throws {
        let (fixture, session, _) = try self.signedIn()
        _ = try await session.send(
            LatchkeyRequest(method: "GET", path: "/api/v1/mcp/daw", queryItems: [URLQueryItem(name: "a", value: "1")], auth: .tokenInQuery))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.query == "a=1&token=access-1")
        #expect(sent.header("Authorization") == nil)
        let url = try await session.webSocketURL(path: "/api/v1/mcp/daw")
        #expect(url.absoluteString == "wss://auth.example.test/api/v1/mcp/daw?token=access-1")
    }

    @Test func aBearerRequestWithoutASessionIsNotSent() async throws {
        let fixture = Fixture()
        await #expect(throws: LatchkeyError.notSignedIn) { try await fixture.session().send(.get("/api/v1/users/me", auth: .bearer)) }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func tooManyRequestsIsARateLimitErrorAndAnEvent() async throws {
        let (_, session, _) = try self.signedIn { _ in
            .error(
                429, .rateLimited, "Slow down.",
                headers: ["x-ratelimit-limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800003600", "Retry-After": "3600"])
        }
        let events = await session.events()
        let expected = RateLimitInfo(limit: 5, remaining: 0, reset: Date(timeIntervalSince1970: 1_800_003_600), retryAfter: 3600)
        await #expect(throws: LatchkeyError.rateLimited(expected)) { try await session.send(.get("/api/v1/edit", auth: .bearer)) }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .rateLimited(expected))
        #expect(LatchkeyError.rateLimited(expected).description == "Too many requests. Try again in 60 minutes.")
    }

    @Test func rateLimitResetAndRetryAfterAreReadInBothForms() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let relative = RateLimitInfo(
            response: TransportResponse(status: 429, headers: ["X-RateLimit-Reset": "90", "Retry-After": "Fri, 15 Jan 2027 08:01:40 GMT"]), now: now)
        #expect(relative?.reset == now.addingTimeInterval(90))
        #expect(relative?.retryAfter == 100)
        #expect(RateLimitInfo(response: TransportResponse(status: 200), now: now) == nil)
    }

    @Test func successfulResponsesCarryTheirRateLimitHeaders() async throws {
        let (_, session, _) = try self.signedIn { _ in
            TransportResponse(status: 200, headers: ["X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "4"])
        }
        let response = try await session.send(.get("/api/v1/edit", auth: .bearer))
        #expect(response.rateLimit == RateLimitInfo(limit: 5, remaining: 4))
    }

    @Test func aMissingDeviceIDAnswerIsItsOwnError() async throws {
        let (_, session, _) = try self.signedIn { _ in .error(400, .invalidHeader, "X-Device-ID header is required for guest users.") }
        await #expect(throws: LatchkeyError.refusal(400, .invalidHeader, "X-Device-ID header is required for guest users.")) {
            try await session.send(.get("/api/v1/edit", auth: .bearer))
        }
    }

    @Test func noAnswerIsOfflineAndA5xxIsAServerError() async throws {
        let (_, offline, _) = try self.signedIn { _ in throw URLError(.notConnectedToInternet) }
        await #expect(throws: LatchkeyError.offline(.notConnectedToInternet)) { try await offline.send(.get("/api/v1/health", auth: .none)) }
        let (_, failing, _) = try self.signedIn { _ in TransportResponse(status: 502) }
        await #expect(throws: LatchkeyError.failure(502, nil, "HTTP 502")) {
            try await failing.send(.get("/api/v1/health", auth: .none))
        }
        #expect(LatchkeyError.offline(.notConnectedToInternet).description == "Cannot reach the server. Check your connection and try again.")
    }

    @Test func anExternalTokenProviderSuppliesTheBearerAndIsAskedForAFreshOneAfterA401() async throws {
        let forced = Counter()
        let fixture = Fixture { request in request.bearer == "clerk-2" ? .json(200, Samples.profile("user_clerk")) : .error(401, .invalidToken) }
        let session = fixture.session {
            $0.tokenProvider = { forceRefresh in
                if forceRefresh { forced.increment() }
                return forceRefresh ? "clerk-2" : "clerk-1"
            }
        }
        #expect(try await session.currentUser().userID == "user_clerk")
        #expect(fixture.transport.requests.map(\.bearer) == ["clerk-1", "clerk-2"])
        #expect(forced.count == 1)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
        #expect(try fixture.store.load()?.session == nil)
    }

    @Test func anExternalProviderWithoutATokenIsSignedOut() async throws {
        let fixture = Fixture()
        let session = fixture.session { $0.tokenProvider = { _ in nil } }
        #expect(await session.bootstrap() == .signedOut())
        #expect(fixture.transport.requests.isEmpty)
    }
}
