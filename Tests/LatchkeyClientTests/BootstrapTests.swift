import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct BootstrapTests {
    @Test func aFreshTokenIsCheckedWithMeAndSignsIn() async throws {
        let fixture = Fixture { Samples.me(accepting: ["access-1"], $0) }
        try fixture.storeSession()
        let state = await fixture.session().bootstrap()
        #expect(state.isSignedIn)
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/me"])
    }

    @Test func nothingStoredIsSignedOutWithoutANetworkCall() async {
        let fixture = Fixture()
        #expect(await fixture.session().bootstrap() == .signedOut())
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aTokenExpiringWithinTheSkewIsRefreshedBeforeMe() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession(lifetime: 900)
        fixture.clock.advance(by: 900 - 299)  // 299 s left: inside the 300 s buffer
        #expect(await fixture.session().bootstrap().isSignedIn)
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/refresh", "/api/v1/auth/me"])
        #expect(try fixture.store.load()?.session?.refreshToken == "refresh-2")
    }

    @Test func aTokenOutsideTheSkewIsNotRefreshed() async throws {
        let fixture = Fixture { Samples.me(accepting: ["access-1"], $0) }
        try fixture.storeSession(lifetime: 900)
        fixture.clock.advance(by: 900 - 301)
        #expect(await fixture.session().bootstrap().isSignedIn)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
    }

    @Test func theSkewIsConfigurable() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession(lifetime: 900)
        fixture.clock.advance(by: 900 - 500)
        #expect(await fixture.session { $0.clockSkew = 600 }.bootstrap().isSignedIn)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
    }

    @Test func meRejectedRefreshesAndRetriesOnce() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession()
        #expect(await fixture.session().bootstrap().isSignedIn)
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/me", "/api/v1/auth/refresh", "/api/v1/auth/me"])
    }

    @Test func meRejectedAfterARefreshSignsOutWithoutLooping() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: [], request)
        }
        try fixture.storeSession()
        #expect(await fixture.session().bootstrap() == .signedOut(reason: .sessionExpired))
        #expect(fixture.transport.requests.count == 3)
    }

    @Test func aRejectedRefreshTokenEndsInSessionExpiredAndKeepsTheDevice() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .error(401, .invalidGrant) : Samples.me(accepting: [], request)
        }
        let deviceID = try fixture.storeSession()
        #expect(await fixture.session().bootstrap() == .signedOut(reason: .sessionExpired))
        #expect(try fixture.store.load()?.session == nil)
        #expect(try fixture.store.load()?.deviceID == deviceID)
        #expect(try fixture.store.load()?.deviceSecret == "secret-1")
    }

    @Test func offlineAtLaunchKeepsTheSession() async throws {
        let fixture = Fixture { _ in throw URLError(.notConnectedToInternet) }
        try fixture.storeSession()
        #expect(await fixture.session().bootstrap().isSignedIn)
        #expect(try fixture.store.load()?.session != nil)
    }

    @Test func anExpiringGuestTokenIsClearedAtLaunchWithoutANetworkCall() async throws {
        let fixture = Fixture()
        try fixture.storeSession(refresh: nil, kind: .guest, lifetime: 900)
        fixture.clock.advance(by: 601)  // 299 s left
        #expect(await fixture.session().bootstrap() == .signedOut(reason: .sessionExpired))
        #expect(try fixture.store.load()?.session == nil)
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aGuestTokenOutsideTheSkewIsRestored() async throws {
        let fixture = Fixture { Samples.me(accepting: ["access-1"], $0) }
        try fixture.storeSession(refresh: nil, kind: .guest, lifetime: 900)
        fixture.clock.advance(by: 599)
        #expect(await fixture.session().bootstrap().isSignedIn)
    }
}
