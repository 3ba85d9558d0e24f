import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 7: sessions whose bearer comes from an identity provider's SDK (seed 004, Clerk).
@Suite struct ProviderModeTests {
    /// An unsigned JWT-shaped token whose `sub` is the provider's user ID.
    static func providerToken(subject: String, n: Int) -> String {
        func encode(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
        }
        return encode(#"{"alg":"RS256"}"#) + "." + encode(#"{"sub":"\#(subject)","n":\#(n)}"#) + ".c2ln"
    }

    static func profile(_ request: TransportRequest, _ token: String) -> TransportResponse {
        request.bearer == token ? .json(200, Samples.profile("u-42")) : .error(401, .invalidToken)
    }

    @Test func offlineAtLaunchKeepsTheUserIDTheServerGaveNotTheProvidersSubject() async throws {
        let token = Self.providerToken(subject: "user_clerk", n: 1)
        let online = Fixture { Self.profile($0, token) }
        let signedIn = AuthState.signedIn(AuthSession(userID: "u-42", kind: .external, expiresAt: nil))
        #expect(await online.session { $0.tokenProvider = { _ in token } }.bootstrap() == signedIn)

        let offline = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, tokenProvider: { _ in token }), secureStore: online.store, defaults: online.defaults,
            transport: StubTransport { _ in throw URLError(.notConnectedToInternet) }, clock: online.clock)
        #expect(await offline.bootstrap() == signedIn)
    }

    @Test func aServerErrorAtLaunchKeepsThePreviousStateInsteadOfSigningOut() async throws {
        let token = Self.providerToken(subject: "user_clerk", n: 1)
        let online = Fixture { Self.profile($0, token) }
        #expect(await online.session { $0.tokenProvider = { _ in token } }.bootstrap().isSignedIn)

        let failing = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, tokenProvider: { _ in token }), secureStore: online.store, defaults: online.defaults,
            transport: StubTransport { _ in .error(503, .serviceUnavailable) }, clock: online.clock)
        #expect(await failing.bootstrap() == .signedIn(AuthSession(userID: "u-42", kind: .external, expiresAt: nil)))
    }

    @Test func concurrentForcedProviderRefreshesCoalesceIntoOne() async throws {
        let stale = Self.providerToken(subject: "user_clerk", n: 1)
        let fresh = Self.providerToken(subject: "user_clerk", n: 2)
        let forced = Counter()
        let rejected = Counter()
        let gate = Gate()
        let fixture = Fixture { request in
            if request.bearer == stale {
                if rejected.increment() == 8 { gate.open() }
                return .error(401, .invalidToken)
            }
            return Self.profile(request, fresh)
        }
        let session = fixture.session {
            $0.tokenProvider = { force in
                guard force else { return stale }
                forced.increment()
                await gate.wait()  // the provider's network call: every request has met its 401 meanwhile
                return fresh
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await session.currentUser() } }
            try await group.waitForAll()
        }
        #expect(forced.count == 1)
        #expect(fixture.transport.requests.filter { $0.bearer == fresh }.count == 8)
    }

    /// Issue 30, item 6: Clerk's SDK throwing (offline) at launch.
    @Test func aThrowingProviderAtAFirstLaunchEndsSignedOutNotRestoring() async throws {
        let fixture = Fixture { Self.profile($0, "never-asked") }
        let session = fixture.session { $0.tokenProvider = { _ in throw URLError(.notConnectedToInternet) } }
        #expect(await session.bootstrap() == .signedOut())
        #expect(await session.state == .signedOut())
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func revalidatingAfterAProviderFailureAtLaunchAsksTheProviderAgain() async throws {
        let token = Self.providerToken(subject: "user_clerk", n: 1)
        let reachable = Shared(false)
        let fixture = Fixture { Self.profile($0, token) }
        let session = fixture.session {
            $0.tokenProvider = { _ in
                guard reachable.value else { throw URLError(.notConnectedToInternet) }
                return token
            }
        }
        #expect(await session.bootstrap() == .signedOut())
        reachable.value = true
        await session.revalidate()
        #expect(await session.state == .signedIn(AuthSession(userID: "u-42", kind: .external, expiresAt: nil)))
    }

    @Test func aThrowingProviderAtLaunchKeepsTheRememberedUser() async throws {
        let token = Self.providerToken(subject: "user_clerk", n: 1)
        let online = Fixture { Self.profile($0, token) }
        #expect(await online.session { $0.tokenProvider = { _ in token } }.bootstrap().isSignedIn)

        let failing = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, tokenProvider: { _ in throw URLError(.timedOut) }), secureStore: online.store,
            defaults: online.defaults, transport: online.transport, clock: online.clock)
        #expect(await failing.bootstrap() == .signedIn(AuthSession(userID: "u-42", kind: .external, expiresAt: nil)))
    }

    @Test func anotherAccountsTokenWhileTheServerIsDownIsNotTheRememberedUser() async throws {
        let token = Self.providerToken(subject: "user_clerk", n: 1)
        let online = Fixture { Self.profile($0, token) }
        #expect(await online.session { $0.tokenProvider = { _ in token } }.bootstrap().isSignedIn)

        let other = Self.providerToken(subject: "user_other", n: 1)
        let failing = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, tokenProvider: { _ in other }), secureStore: online.store, defaults: online.defaults,
            transport: StubTransport { _ in .error(503, .serviceUnavailable) }, clock: online.clock)
        #expect(await failing.bootstrap() == .signedOut())
    }

    @Test func theSessionFollowsTheProvidersSignOutAndNextAccount() async throws {
        let first = Self.providerToken(subject: "user_first", n: 1)
        let second = Self.providerToken(subject: "user_second", n: 1)
        let fixture = Fixture { request in
            switch request.bearer {
            case first: .json(200, Samples.profile("u-1"))
            case second: .json(200, Samples.profile("u-2"))
            default: .error(401, .invalidToken)
            }
        }
        let current = Shared<String?>(first)
        let session = fixture.session { $0.tokenProvider = { _ in current.value } }
        #expect(await session.bootstrap() == .signedIn(AuthSession(userID: "u-1", kind: .external, expiresAt: nil)))
        let recorder = await EventRecorder(session)
        var states = await session.authStates().makeAsyncIterator()
        _ = await states.next()
        let (changes, continuation) = AsyncStream<Void>.makeStream()
        let following = Task { await session.followProviderChanges(changes) }

        current.value = nil  // signed out of the provider
        continuation.yield()
        #expect(await states.next() == .signedOut(reason: .signedOutElsewhere))
        #expect(await recorder.saw(.signedOut(.signedOutElsewhere)))

        current.value = second  // the next account signed in
        continuation.yield()
        #expect(await states.next() == .signedIn(AuthSession(userID: "u-2", kind: .external, expiresAt: nil)))
        continuation.finish()
        await following.value
    }
}
