import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 3: nothing from one user's session reaches the next user's, in this process or another.
@Suite struct FencingTests {
    @Test func aHeld401AcrossSignOutAndTheNextSignInIsNotSentAgainWithTheNextUsersToken() async throws {
        let sent = Gate()
        let held = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/logout": return .json(200, LogoutResponse(revokedSessions: 1))
            case "/api/v1/auth/register-device": return .json(200, Samples.pair(5, userID: "next"))
            case "/api/v1/auth/refresh": return .json(200, Samples.pair(2))
            case _ where request.bearer == "access-1":
                sent.open()
                await held.wait()  // the 401 arrives after the user signed out and the next one signed in
                return .error(401, .invalidToken)
            default: return Samples.me(accepting: ["access-2", "access-5"], request)
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        let request = Task { try await session.send(.get("/api/v1/songs", auth: .bearer)) }
        await sent.wait()
        try await session.signOut()
        try await session.registerDevice()
        held.open()
        await #expect(throws: LatchkeyError.notSignedIn) { try await request.value }
        #expect(fixture.transport.requests(to: "/api/v1/songs").map(\.bearer) == ["access-1"])
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
        #expect(try fixture.store.load()?.session?.accessToken == "access-5")
    }

    @Test func aRefreshInAnotherProcessFinishingAfterTheNextUserWasStoredDoesNotOverwriteThem() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let (processA, processB, refreshSent, answer) = Self.twoProcesses(fixture)
        let refreshing = Task { try await processB.refresh() }
        await refreshSent.wait()
        try await processA.signOut()
        try await processA.registerDevice()  // user "next" is stored
        answer.open()
        _ = try? await refreshing.value
        #expect(try fixture.store.load()?.session?.accessToken == "access-5")
        #expect(try fixture.store.load()?.session?.userID == "next")
    }

    @Test func aSignOutInAnotherProcessAfterTheNextUserWasStoredDoesNotDeleteThem() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let (processA, processB, _, _) = Self.twoProcesses(fixture)
        _ = try await processB.deviceID()  // B has read user 1's session
        try await processA.signOut()
        try await processA.registerDevice()
        try await processB.signOut()
        #expect(try fixture.store.load()?.session?.accessToken == "access-5")
    }

    /// Two processes over one store: A signs out and registers user "next"; B's refreshes wait for `answer`.
    static func twoProcesses(_ fixture: Fixture) -> (LatchkeySession, LatchkeySession, Gate, Gate) {
        let refreshSent = Gate()
        let answer = Gate()
        let transportA = StubTransport { request in
            switch request.url.path {
            case "/api/v1/auth/register-device": .json(200, Samples.pair(5, userID: "next"))
            default: .json(200, LogoutResponse(revokedSessions: 1))
            }
        }
        let transportB = StubTransport { request in
            if request.url.path == "/api/v1/auth/refresh" {
                refreshSent.open()
                await answer.wait()
                return .json(200, Samples.pair(2))
            }
            return .json(200, LogoutResponse(revokedSessions: 1))
        }
        let configuration = LatchkeySession.Configuration(serverURL: Fixture.serverURL)
        let processA = LatchkeySession(
            configuration: configuration, secureStore: fixture.store, defaults: fixture.defaults, transport: transportA, clock: fixture.clock)
        let processB = LatchkeySession(
            configuration: configuration, secureStore: fixture.store, defaults: fixture.defaults, transport: transportB, clock: fixture.clock)
        return (processA, processB, refreshSent, answer)
    }
}
