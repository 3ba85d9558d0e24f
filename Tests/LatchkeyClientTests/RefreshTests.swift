import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct RefreshTests {
    @Test func concurrentRequestsRejectedWithOneTokenCauseExactlyOneRefresh() async throws {
        let rejected = Counter()
        let gate = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh":
                await gate.wait()  // hold the refresh until every request has met the 401
                return .json(200, Samples.pair(2))
            default:
                if request.bearer == "access-1" {
                    if rejected.increment() == 8 { gate.open() }
                    return .error(401, .invalidToken)
                }
                return .json(200, Samples.profile())
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await session.currentUser() } }
            try await group.waitForAll()
        }
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(fixture.transport.requests(to: "/api/v1/auth/me").filter { $0.bearer == "access-2" }.count == 8)
    }

    @Test func concurrentRequestsMeetingAnExpiredTokenCauseExactlyOneRefresh() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession()
        fixture.clock.advance(by: 1000)
        let session = fixture.session()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await session.currentUser() } }
            try await group.waitForAll()
        }
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(fixture.transport.requests(to: "/api/v1/auth/me").count == 8)
    }

    @Test func theRefreshRequestIsNeverRetried() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .error(401, .invalidGrant) : Samples.me(accepting: [], request)
        }
        try fixture.storeSession()
        let session = fixture.session()
        await #expect(throws: LatchkeyError.sessionExpired) { try await session.currentUser() }
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/me", "/api/v1/auth/refresh"])
        #expect(await session.state == .signedOut(reason: .sessionExpired))
    }

    @Test func aServerErrorDuringRefreshKeepsTheSession() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .error(503, .serviceUnavailable) : Samples.me(accepting: [], request)
        }
        try fixture.storeSession()
        let session = fixture.session()
        await #expect(throws: LatchkeyError.failure(503, .serviceUnavailable, "no")) { try await session.currentUser() }
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(try fixture.store.load()?.session?.refreshToken == "refresh-1")
    }

    @Test func losingARaceToAnotherProcessAdoptsItsStoredTokenWithoutRefreshing() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession()
        let app = fixture.session()
        let appExtension = fixture.session()  // another process over the same Keychain
        _ = try await appExtension.deviceID()
        _ = try await app.currentUser()  // the app refreshes: access-2 / refresh-2 are stored
        _ = try await appExtension.currentUser()  // the extension still holds access-1: 401 → finds access-2 in the store
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(await appExtension.state.isSignedIn)
    }

    @Test func aRejectedRefreshAfterAnotherProcessRotatedDoesNotSignOut() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let store = fixture.store
        // The other process rotates while our refresh is on the wire; our refresh token is then reused outside the grace window.
        let transport = StubTransport { request in
            if request.url.path == "/api/v1/auth/refresh" {
                var credentials = try store.load()!
                credentials.session?.accessToken = "access-9"
                credentials.session?.refreshToken = "refresh-9"
                try store.save(credentials)
                return .error(401, .invalidGrant)
            }
            return Samples.me(accepting: ["access-9"], request)
        }
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: store, defaults: fixture.defaults, transport: transport,
            clock: fixture.clock)
        _ = try await session.currentUser()
        #expect(await session.state.isSignedIn)
        #expect(try store.load()?.session?.refreshToken == "refresh-9")
    }

    @Test func aRefreshCompletingAfterSignOutCannotWriteTheSessionBack() async throws {
        let gate = Gate()
        let refreshStarted = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh":
                refreshStarted.open()
                await gate.wait()
                return .json(200, Samples.pair(2))
            case "/api/v1/auth/logout": return .json(200, LogoutResponse(revokedSessions: 1))
            default: return Samples.me(accepting: ["access-2"], request)
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        let request = Task { try await session.currentUser() }
        await refreshStarted.wait()
        try await session.signOut()
        gate.open()
        await #expect(throws: LatchkeyError.notSignedIn) { try await request.value }
        #expect(try fixture.store.load()?.session == nil)
        #expect(await session.state == .signedOut(reason: .requested))
    }

    @Test func aRefreshCompletingAfterTheNextSignInCannotTouchTheNewSession() async throws {
        let gate = Gate()
        let refreshStarted = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh":
                refreshStarted.open()
                await gate.wait()
                return .json(200, Samples.pair(2))
            case "/api/v1/auth/logout": return .json(200, LogoutResponse(revokedSessions: 1))
            case "/api/v1/auth/register-device": return .json(200, Samples.pair(5, userID: "next"))
            default: return Samples.me(accepting: ["access-2"], request)
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        let request = Task { try await session.currentUser() }
        await refreshStarted.wait()
        try await session.signOut()
        try await session.registerDevice()
        gate.open()
        _ = try? await request.value
        #expect(try fixture.store.load()?.session?.accessToken == "access-5")
        #expect(await session.state == .signedIn(AuthSession(userID: "next", kind: .session, expiresAt: fixture.clock.now().addingTimeInterval(900))))
    }

    @Test func aGuestTokenRejectedEndsInSessionExpiredWithoutARefresh() async throws {
        let fixture = Fixture { Samples.me(accepting: [], $0) }
        try fixture.storeSession(refresh: nil, kind: .guest)
        let session = fixture.session()
        await #expect(throws: LatchkeyError.sessionExpired) { try await session.currentUser() }
        #expect(fixture.transport.requests.count == 1)
        #expect(await session.state == .signedOut(reason: .sessionExpired))
    }

    @Test func anExpiredGuestTokenIsNotSent() async throws {
        let fixture = Fixture()
        try fixture.storeSession(refresh: nil, kind: .guest)
        fixture.clock.advance(by: 900)
        let session = fixture.session()
        await #expect(throws: LatchkeyError.sessionExpired) { try await session.currentUser() }
        #expect(fixture.transport.requests.isEmpty)
    }
}
