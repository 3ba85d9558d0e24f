import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 8: the app's own API, on any host.
@Suite struct AppAPITests {
    @Test func theDeviceIDPolicyReadsTheMirroredIDWithoutTouchingTheKeychain() async throws {
        let deviceID = UUID()
        let store = FlakySecureStore(StoredCredentials(deviceID: deviceID))
        let defaults = InMemoryKeyValueStore(["latchkey.device-id": deviceID.uuidString])
        let transport = StubTransport { _ in TransportResponse(status: 200) }
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: store, defaults: defaults, transport: transport,
            clock: ManualLatchkeyClock())
        store.failsReads = true  // asset calls work while the Keychain is locked, and never read it

        _ = try await session.send(.get("/api/v1/assets/drum-kits", auth: .deviceID))
        #expect(transport.requests.first?.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(store.readCount == 0)
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's own API calls: `accessToken()`, `authorize(_:policy:)`, `data(for:policy:)`, `bytes(for:policy:)`.
@Suite struct AppOwnAPITests {
    static let songs = URL(string: "https://api.stori.example/v1/songs?page=2")!
    /// The 401 of an app's API whose token expired (RFC 6750).
    static let expired = TransportResponse.error(401, .invalidToken, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])

    /// Stori's API and asset origins.
    static func storiOrigins(_ configuration: inout LatchkeySession.Configuration) {
        configuration.apiOrigins = [URL(string: "https://api.stori.example")!, URL(string: "https://cdn.stori.example")!]
    }

    @Test func accessTokenIsTheCurrentOneAndRefreshedFirstWhenAboutToExpire() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2)) }
        try fixture.storeSession()
        let session = fixture.session()
        #expect(try await session.accessToken() == "access-1")
        fixture.clock.advance(by: 700)  // 200 s left: inside the 300 s skew
        #expect(try await session.accessToken() == "access-2")
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/refresh"])
    }

    @Test func dataForAnyHostCarriesTheBearerAndConcurrent401sShareOneRefreshAndRetryOnce() async throws {
        let rejected = Counter()
        let gate = Gate()
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/refresh" {
                await gate.wait()
                return .json(200, Samples.pair(2))
            }
            guard request.url.host == "api.stori.example" else { return TransportResponse(status: 404) }
            if request.bearer == "access-1" {
                if rejected.increment() == 4 { gate.open() }
                return Self.expired
            }
            return TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"songs":[]}"#.utf8))
        }
        try fixture.storeSession()
        let session = fixture.session(Self.storiOrigins)
        var request = URLRequest(url: Self.songs)
        request.setValue("yes", forHTTPHeaderField: "X-App")
        let sent = request
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await session.data(for: sent, policy: .bearer).1.statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [200, 200, 200, 200])
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        let retried = fixture.transport.requests(to: "/v1/songs").filter { $0.bearer == "access-2" }
        #expect(retried.count == 4)
        #expect(retried.allSatisfy { $0.url == Self.songs && $0.header("X-App") == "yes" })
    }

    @Test func dataReturnsTheAppsOwnErrorsAsTheyAre() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 422, body: Data(#"{"detail":"bad tempo"}"#.utf8)) }
        try fixture.storeSession()
        let (body, response) = try await fixture.session(Self.storiOrigins).data(for: URLRequest(url: Self.songs), policy: .bearer)
        #expect(response.statusCode == 422)
        #expect(String(decoding: body, as: UTF8.self) == #"{"detail":"bad tempo"}"#)
    }

    @Test func authorizeSetsThePolicysCredentialsOnAnAppsOwnRequest() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeSession()
        let session = fixture.session(Self.storiOrigins)
        var bearer = URLRequest(url: Self.songs)
        try await session.authorize(&bearer, policy: .bearer)
        #expect(bearer.value(forHTTPHeaderField: "Authorization") == "Bearer access-1")
        #expect(bearer.value(forHTTPHeaderField: "X-Device-ID") == nil)

        var asset = URLRequest(url: URL(string: "https://cdn.stori.example/kits")!)
        asset.setValue("Bearer by-mistake", forHTTPHeaderField: "Authorization")
        try await session.authorize(&asset, policy: .deviceID)
        #expect(asset.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(asset.value(forHTTPHeaderField: "X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func deviceIDForGuestsSendsTheDeviceIDOnlyWithAGuestSession() async throws {
        let guest = Fixture { _ in TransportResponse(status: 200) }
        let deviceID = try guest.storeSession(refresh: nil, kind: .guest)
        _ = try await guest.session(Self.storiOrigins).data(for: URLRequest(url: Self.songs), policy: .deviceIDForGuests)
        #expect(guest.transport.requests.first?.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(guest.transport.requests.first?.bearer == "access-1")

        let user = Fixture { _ in TransportResponse(status: 200) }
        try user.storeSession()
        _ = try await user.session(Self.storiOrigins).data(for: URLRequest(url: Self.songs), policy: .deviceIDForGuests)
        #expect(user.transport.requests.first?.header("X-Device-ID") == nil)
        #expect(user.transport.requests.first?.bearer == "access-1")
    }

    @Test func bytesRetriesOnceAfterA401AndStreamsTheRetrysBody() async throws {
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/refresh" { return .json(200, Samples.pair(2)) }
            return request.bearer == "access-2"
                ? TransportResponse(status: 200, body: Data("data: one\n\ndata: two\n".utf8)) : Self.expired
        }
        try fixture.storeSession()
        var request = URLRequest(url: URL(string: "https://api.stori.example/api/v1/compose/stream")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"prompt":"drums"}"#.utf8)
        let (bytes, response) = try await fixture.session(Self.storiOrigins).bytes(for: request, policy: .bearer)
        #expect(response.statusCode == 200)
        var lines: [String] = []
        for try await line in bytes.lines { lines.append(line) }
        #expect(lines == ["data: one", "", "data: two"])
        #expect(fixture.transport.requests(to: "/api/v1/compose/stream").map(\.bearer) == ["access-1", "access-2"])
        #expect(fixture.transport.requests(to: "/api/v1/compose/stream").last?.body == request.httpBody)
    }

    @Test func theMirroredDeviceIDIsReadableWithoutTheKeychain() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeSession()
        #expect(fixture.session().mirroredDeviceID == deviceID)
    }
}

/// Issue 30, item 16: the rate-limit headers of a 429 that `data(for:)` hands back.
@Suite struct AppAPIRateLimitTests {
    @Test func rateLimitInfoReadsAnHTTPURLResponse() async throws {
        let fixture = Fixture { _ in
            TransportResponse(status: 429, headers: ["retry-after": "120", "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0"])
        }
        try fixture.storeSession()
        let session = fixture.session { $0.apiOrigins = [URL(string: "https://api.example.com")!] }
        let (_, response) = try await session.data(for: URLRequest(url: URL(string: "https://api.example.com/v1/play")!), policy: .bearer)
        let info = try #require(RateLimitInfo(response: response, now: fixture.clock.now()))
        #expect(response.statusCode == 429)
        #expect(info.retryAfter == 120)
        #expect(info.limit == 10)
        #expect(info.remaining == 0)
        #expect(info.description == "Try again in 2 minutes.")
        #expect(
            RateLimitInfo(
                response: HTTPURLResponse(url: URL(string: "https://api.example.com")!, statusCode: 200, httpVersion: nil, headerFields: [:])!) == nil
        )
    }
}
