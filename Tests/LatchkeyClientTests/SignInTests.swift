import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct SignInTests {
    @Test func registerDeviceStoresTheSecretAndSendsItNextTime() async throws {
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/logout" { return .json(200, LogoutResponse(revokedSessions: 1)) }
            let body = try request.decodeBody(RegisterDeviceRequest.self)
            return body.deviceSecret == nil ? .json(201, Samples.pair(1, secret: "secret-new")) : .json(200, Samples.pair(2))
        }
        let session = fixture.session()
        let deviceID = try await session.deviceID()
        try await session.registerDevice()
        #expect(try fixture.store.load()?.deviceSecret == "secret-new")
        try await session.signOut()
        try await session.registerDevice()
        let bodies = try fixture.transport.requests(to: "/api/v1/auth/register-device").map { try $0.decodeBody(RegisterDeviceRequest.self) }
        #expect(bodies.map(\.deviceID) == [deviceID.uuidString.lowercased(), deviceID.uuidString.lowercased()])
        #expect(bodies.map(\.deviceSecret) == [nil, "secret-new"])
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
        #expect(try fixture.store.load()?.deviceSecret == "secret-new")
    }

    @Test func aWrongDeviceSecretIsItsOwnError() async throws {
        let fixture = Fixture { _ in .error(401, .invalidDeviceSecret, "This device ID is already registered.") }
        #expect(await thrownCode { try await fixture.session().registerDevice() } == .invalidDeviceSecret)
    }

    @Test func anAccessCodeIsValidatedThenStored() async throws {
        let fixture = Fixture()
        let deviceID = try await fixture.session().deviceID()
        let transport = StubTransport { request in
            #expect(request.bearer == "the-code")
            return .json(200, ValidateTokenResponse(sub: deviceID.uuidString.lowercased(), exp: 1_802_592_000, kind: .accessCode))
        }
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: fixture.store, defaults: fixture.defaults, transport: transport,
            clock: fixture.clock)
        let redeemed = try await session.redeemAccessCode("  the-code\n")
        #expect(redeemed.kind == .accessCode)
        #expect(transport.requests.map(\.url.path) == ["/api/v1/validate-token"])
        let stored = try #require(try fixture.store.load()?.session)
        #expect(stored.accessToken == "the-code")
        #expect(stored.refreshToken == nil)
        #expect(stored.accessTokenExpiresAt == Date(timeIntervalSince1970: 1_802_592_000))
    }

    @Test func anAccessCodeForAnotherUserIsRefusedUnlessAllowed() async throws {
        let fixture = Fixture { _ in .json(200, ValidateTokenResponse(sub: UUID().uuidString.lowercased(), exp: 1_802_592_000, kind: .accessCode)) }
        #expect(await thrownCode { try await fixture.session().redeemAccessCode("code") } == .accessCodeForAnotherDevice)
        #expect(try fixture.store.load()?.session == nil)
        try await fixture.session { $0.requireAccessCodeForThisDevice = false }.redeemAccessCode("code")
        #expect(try fixture.store.load()?.session?.accessToken == "code")
    }

    @Test func aRejectedAccessCodeIsAnInvalidCode() async throws {
        let fixture = Fixture { _ in .json(401, InvalidTokenResponse(error: .init(code: .invalidToken, message: "Expired."))) }
        #expect(await thrownCode { try await fixture.session().redeemAccessCode("code") } == .invalidAccessCode)
    }

    @Test func signOutRevokesOnTheServerWithTheScopeAndClearsTheSession() async throws {
        let fixture = Fixture { _ in .json(200, LogoutResponse(revokedSessions: 3)) }
        let deviceID = try fixture.storeSession()
        let session = fixture.session()
        try await session.signOut(scope: .global)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/auth/logout")
        #expect(sent.bearer == "access-1")
        #expect(try sent.decodeBody(LogoutRequest.self).scope == .global)
        #expect(try fixture.store.load()?.session == nil)
        #expect(try fixture.store.load()?.deviceID == deviceID)
        #expect(await session.state == .signedOut(reason: .requested))
    }

    @Test func signOutOfflineStillSignsOutLocally() async throws {
        let fixture = Fixture { _ in throw URLError(.timedOut) }
        try fixture.storeSession()
        let session = fixture.session()
        await #expect(throws: LatchkeyError.offline(.timedOut)) { try await session.signOut() }
        #expect(try fixture.store.load()?.session == nil)
        #expect(await session.state == .signedOut(reason: .requested))
    }

    @Test func signOutWithAnExpiredTokenRefreshesOnlyToRevoke() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : .json(200, LogoutResponse(revokedSessions: 1))
        }
        try fixture.storeSession()
        fixture.clock.advance(by: 1000)
        try await fixture.session().signOut()
        #expect(fixture.transport.requests(to: "/api/v1/auth/logout").first?.bearer == "access-2")
        #expect(try fixture.store.load()?.session == nil)
    }

    @Test func continueAsGuestSendsTheDeviceIDAndStoresAShortLivedToken() async throws {
        struct Guest: Encodable {
            let access_token = "guest-1"
            let token_type = "Bearer"
            let expires_in = 900
            let limitations = ["max_actions_per_day": 5]
        }
        let fixture = Fixture { _ in .json(200, Guest()) }
        let session = fixture.session()
        let deviceID = try await session.deviceID()
        let limitations = try await session.continueAsGuest()
        #expect(limitations == GuestLimitations(maxActionsPerDay: 5))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/auth/guest")
        #expect(sent.method == "POST")
        #expect(sent.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(sent.header("Authorization") == nil)
        let stored = try #require(try fixture.store.load()?.session)
        #expect(stored.kind == .guest)
        #expect(stored.refreshToken == nil)
        #expect(stored.accessTokenExpiresAt == fixture.clock.now().addingTimeInterval(900))
    }

    @Test func registerUserPostsTheDeviceUUID() async throws {
        let fixture = Fixture { request in
            .json(201, RegisterUserResponse(userID: try request.decodeBody(RegisterUserRequest.self).userID, created: true))
        }
        let session = fixture.session()
        #expect(try await session.registerUser())
        let deviceID = try await session.deviceID()
        #expect(try fixture.transport.requests.first?.decodeBody(RegisterUserRequest.self).userID == deviceID.uuidString.lowercased())
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }
}
