import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 9: lifecycle, events, and short rate limits.
@Suite struct LifecycleTests {
    @Test func a429WithAShortRetryAfterIsRetriedOnce() async throws {
        let calls = Counter()
        let fixture = Fixture { request in
            calls.increment() == 1 ? .error(429, .rateLimited, headers: ["Retry-After": "2"]) : .json(200, Samples.profile())
        }
        try fixture.storeSession()
        let session = fixture.session()
        let before = fixture.clock.now()
        #expect(try await session.currentUser().userID == "user")
        #expect(calls.count == 2)
        #expect(fixture.clock.now().timeIntervalSince(before) >= 2)  // it waited on the session's clock
    }

    @Test func a429WithALongRetryAfterOrASecond429IsThrown() async throws {
        let long = Fixture { _ in .error(429, .rateLimited, headers: ["Retry-After": "30"]) }
        try long.storeSession()
        await #expect(throws: LatchkeyError.self) { try await long.session().currentUser() }
        #expect(long.transport.requests.count == 1)

        let twice = Fixture { _ in .error(429, .rateLimited, headers: ["Retry-After": "1"]) }
        try twice.storeSession()
        await #expect(throws: LatchkeyError.self) { try await twice.session().currentUser() }
        #expect(twice.transport.requests.count == 2)
    }
}

/// Events that say what happened to the session, and the app lifecycle the session follows.
@Suite struct SessionEventTests {
    @Test func eventsSayWhenATokenWasRefreshedAndWhyTheSessionEnded() async throws {
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh": .json(200, Samples.pair(2))
            case "/api/v1/auth/logout": .json(200, LogoutResponse(revokedSessions: 1))
            default: Samples.me(accepting: ["access-2"], request)
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        let events = await EventRecorder(session)
        let refreshed = try await session.refresh()
        try await session.signOut()
        #expect(await events.saw(.tokenRefreshed(refreshed)))
        #expect(await events.saw(.signedOut(.requested)))

        let rejecting = Fixture { request in request.url.path == "/api/v1/auth/refresh" ? .error(401, .invalidGrant) : .error(401, .invalidToken) }
        try rejecting.storeSession()
        let expiring = rejecting.session()
        let expiredEvents = await EventRecorder(expiring)
        await #expect(throws: LatchkeyError.sessionExpired) { try await expiring.currentUser() }
        #expect(await expiredEvents.saw(.signedOut(.sessionExpired)))
    }

    @Test func adoptingTheSessionAnotherProcessStoredIsAnEvent() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession()
        let app = fixture.session()
        let appExtension = fixture.session()
        _ = try await appExtension.deviceID()
        let events = await EventRecorder(appExtension)
        _ = try await app.currentUser()  // the app refreshes and stores access-2
        _ = try await appExtension.currentUser()  // the extension's access-1 meets a 401 and finds access-2 in the store
        #expect(
            await events.saw(.sessionAdopted(AuthSession(userID: "user", kind: .session, expiresAt: fixture.clock.now().addingTimeInterval(900)))))
    }

    @Test func comingToTheForegroundRefreshesATokenAboutToExpire() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: ["access-1", "access-2"], request)
        }
        try fixture.storeSession()
        let session = fixture.session()
        #expect(await session.bootstrap().isSignedIn)
        fixture.clock.advance(by: 700)  // suspended for a while: 200 s left
        await session.handle(.willEnterForeground)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
    }

    @Test func comingToTheForegroundPicksUpWhatAnotherProcessDid() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/register-device"
                ? .json(200, Samples.pair(5, userID: "next")) : Samples.me(accepting: ["access-1"], request)
        }
        try fixture.storeSession()
        let app = fixture.session()
        #expect(await app.bootstrap().isSignedIn)
        var credentials = try #require(try fixture.store.load())
        credentials.session = nil  // a share extension signed out while the app was in the background
        try fixture.store.save(credentials)
        await app.handle(.willEnterForeground)
        #expect(await app.state == .signedOut(reason: .signedOutElsewhere))
    }

    @Test func protectedDataBecomingAvailableRestoresASessionTheLockedKeychainHid() async throws {
        let store = FlakySecureStore()
        let transport = StubTransport { Samples.me(accepting: ["access-1"], $0) }
        let clock = ManualLatchkeyClock()
        let defaults = InMemoryKeyValueStore()
        let deviceID = UUID()
        try store.save(
            StoredCredentials(
                deviceID: deviceID,
                session: StoredSession(
                    kind: .session, userID: "user", accessToken: "access-1", accessTokenExpiresAt: clock.now().addingTimeInterval(900))))
        defaults.set(deviceID.uuidString, forKey: "latchkey.device-id")
        store.failsReads = true  // launched in the background before the first unlock
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: store, defaults: defaults, transport: transport, clock: clock)
        #expect(await session.bootstrap() == .storeUnavailable(.locked))
        store.failsReads = false
        let (lifecycle, events) = AsyncStream<AppLifecycleEvent>.makeStream()
        let following = Task { await session.follow(lifecycle) }
        events.yield(.protectedDataDidBecomeAvailable)
        events.finish()
        await following.value
        #expect(await session.state.isSignedIn)
    }
}
