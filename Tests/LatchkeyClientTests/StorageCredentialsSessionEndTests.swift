import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Storage credentials belong to the session they were fetched in: whatever ends it forgets them.
@Suite struct StorageCredentialsSessionEndTests {
    /// The ways a session ends.
    enum Ending: String, CaseIterable, Sendable {
        case signOut, deleteAccount, resetDeviceIdentity, rejectedRefresh

        func perform(on session: LatchkeySession) async throws {
            switch self {
            case .signOut: try await session.signOut()
            case .deleteAccount: try await session.deleteAccount()
            case .resetDeviceIdentity: try await session.resetDeviceIdentity()
            case .rejectedRefresh: await #expect(throws: LatchkeyError.sessionExpired) { try await session.refresh() }
            }
        }
    }

    /// A signed-in session over a stub server: credentials 1, 2, … and whatever the endings and `registerDevice()` need.
    func signedIn(credentialsGate: Gate? = nil, credentialsAsked: Gate? = nil) throws -> (Fixture, LatchkeySession) {
        let clock = ManualLatchkeyClock()
        let issued = Counter()
        let fixture = Fixture(clock: clock) { request in
            switch request.url.path {
            case StorageCredentialsTests.path:
                credentialsAsked?.open()
                await credentialsGate?.wait()
                return .json(200, Samples.storageCredentials(issued.increment(), issuedAt: clock.now()))
            case "/api/v1/auth/logout": return .json(200, LogoutResponse(revokedSessions: 1))
            case "/api/v1/users/me": return .json(200, AccountDeletionResponse(userID: "user", revokedSessions: 1, appleTokensRevoked: 0))
            case "/api/v1/auth/refresh": return .error(401, .invalidGrant)
            case "/api/v1/auth/register-device": return .json(201, Samples.pair(2))
            case "/api/v1/auth/apple": return .json(200, Samples.pair(3, userID: "apple-user"))
            default: return TransportResponse(status: 404)
            }
        }
        try fixture.storeSession(lifetime: 86_400)
        return (fixture, fixture.session())
    }

    @Test(arguments: Ending.allCases)
    func afterTheSessionEndsNothingIsFetchedAndTheNextSessionFetchesItsOwn(ending: Ending) async throws {
        let (fixture, session) = try self.signedIn()
        _ = try await session.storageCredentials()
        try await ending.perform(on: session)
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.storageCredentials() }
        #expect(fixture.transport.requests(to: StorageCredentialsTests.path).count == 1)

        try await session.registerDevice()
        let next = try await session.storageCredentials()
        #expect(next.accessKeyID == "ASIAKEY2")
        #expect(fixture.transport.requests(to: StorageCredentialsTests.path).last?.bearer == "access-2")
    }

    @Test func anotherUserSigningInGetsCredentialsOfItsOwn() async throws {
        let (fixture, session) = try self.signedIn()
        _ = try await session.storageCredentials()
        try await session.signInWithApple(identityToken: "apple-token", rawNonce: "nonce", linkingCurrentUser: false)
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
        #expect(fixture.transport.requests(to: StorageCredentialsTests.path).map(\.bearer) == ["access-1", "access-3"])
    }

    @Test func aFetchStillInFlightWhenTheUserSignsOutIsDiscarded() async throws {
        let answer = Gate()
        let asked = Gate()
        let (fixture, session) = try self.signedIn(credentialsGate: answer, credentialsAsked: asked)
        let call = Task { try await session.storageCredentials() }
        await asked.wait()
        try await session.signOut()
        answer.open()
        await #expect(throws: LatchkeyError.notSignedIn) { try await call.value }

        try await session.registerDevice()
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
        #expect(fixture.transport.requests(to: StorageCredentialsTests.path).count == 2)
    }
}
