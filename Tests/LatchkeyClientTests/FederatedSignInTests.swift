import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct FederatedSignInTests {
    static let applePath = "/api/v1/auth/apple"
    static let exchangePath = "/api/v1/auth/token-exchange"
    static let federatedUser = "9a4c1f0e-5b7d-4e21-8c3a-2f6d0b9e7a15"

    // MARK: Sign in with Apple

    @Test func withoutASessionNoAuthorizationIsSentAndThePairIsStored() async throws {
        let fixture = Fixture { _ in .json(201, Samples.pair(7, userID: Self.federatedUser)) }
        let deviceID = try fixture.storeDevice(secret: "secret-1")
        let session = fixture.session()
        let signedIn = try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce", authorizationCode: "apple-code")

        #expect(signedIn == AuthSession(userID: Self.federatedUser, kind: .session, expiresAt: fixture.clock.now().addingTimeInterval(900)))
        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.count == 1)
        #expect(sent.method == "POST")
        #expect(sent.url.path == Self.applePath)
        #expect(sent.header("Authorization") == nil)
        #expect(sent.header("Content-Type") == "application/json")
        let stored = try #require(try fixture.store.load())
        #expect(stored.session?.accessToken == "access-7")
        #expect(stored.session?.refreshToken == "refresh-7")
        #expect(stored.session?.userID == Self.federatedUser)
        #expect(stored.session?.kind == .session)
        #expect(stored.deviceID == deviceID)
        #expect(stored.deviceSecret == "secret-1")
        #expect(await session.state == .signedIn(signedIn))
    }

    @Test func theBodyCarriesExactlyTheAppleFields() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(7, userID: Self.federatedUser)) }
        let session = fixture.session()
        try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce", authorizationCode: "apple-code")
        try await session.signInWithApple(identityToken: "apple-token-2", rawNonce: "raw-nonce-2")

        let bodies = try fixture.transport.requests(to: Self.applePath).map { try #require($0.jsonObject()) }
        #expect(bodies.count == 2)
        #expect(Set(bodies[0].keys) == ["identity_token", "raw_nonce", "authorization_code"])
        #expect(bodies[0]["identity_token"] as? String == "apple-token")
        #expect(bodies[0]["raw_nonce"] as? String == "raw-nonce")
        #expect(bodies[0]["authorization_code"] as? String == "apple-code")
        #expect(Set(bodies[1].keys) == ["identity_token", "raw_nonce"])  // a nil code is left out, not null
        #expect(bodies[1]["identity_token"] as? String == "apple-token-2")
        #expect(bodies[1]["raw_nonce"] as? String == "raw-nonce-2")
    }

    @Test func withADeviceSessionItsBearerIsSentAndTheUserIDStays() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let userID = deviceID.uuidString.lowercased()
        let transport = StubTransport { _ in .json(200, Samples.pair(2, userID: userID)) }
        let session = fixture.session(transport: transport)

        let signedIn = try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")

        #expect(transport.requests.map(\.url.path) == [Self.applePath])
        #expect(transport.requests.first?.bearer == "access-1")
        #expect(signedIn.userID == userID)
        let stored = try #require(try fixture.store.load())
        #expect(stored.session?.userID == userID)
        #expect(stored.session?.accessToken == "access-2")
        #expect(stored.deviceID == deviceID)
        #expect(stored.deviceSecret == "secret-1")
    }

    @Test func anExpiredDeviceSessionIsRefreshedBeforeItsBearerIsSent() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let userID = deviceID.uuidString.lowercased()
        let transport = StubTransport { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2, userID: userID)) : .json(200, Samples.pair(3, userID: userID))
        }
        fixture.clock.advance(by: 1000)
        let session = fixture.session(transport: transport)

        try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")

        #expect(transport.requests.map(\.url.path) == ["/api/v1/auth/refresh", Self.applePath])
        #expect(try transport.requests.first?.decodeBody(RefreshRequest.self).refreshToken == "refresh-1")
        #expect(transport.requests.last?.bearer == "access-2")
        #expect(try fixture.store.load()?.session?.accessToken == "access-3")
    }

    @Test func aDeviceSessionWhoseRefreshIsRejectedIsOverAndTheSignInGoesAheadWithoutLinking() async throws {
        let fixture = Fixture()
        try fixture.storeDeviceSession()
        let transport = StubTransport { request in
            request.url.path == "/api/v1/auth/refresh" ? .error(401, .invalidGrant) : .json(201, Samples.pair(3, userID: Self.federatedUser))
        }
        fixture.clock.advance(by: 1000)
        let session = fixture.session(transport: transport)

        let signedIn = try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")

        #expect(transport.requests.map(\.url.path) == ["/api/v1/auth/refresh", Self.applePath])
        #expect(transport.requests.last?.header("Authorization") == nil)
        #expect(signedIn.userID == Self.federatedUser)
        #expect(await session.state == .signedIn(signedIn))
        #expect(try fixture.store.load()?.deviceSecret == "secret-1")
    }

    @Test func notLinkingSendsNoBearerEvenWithADeviceSession() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2, userID: Self.federatedUser)) }
        try fixture.storeDeviceSession()
        try await fixture.session().signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce", linkingCurrentUser: false)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.applePath])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
        #expect(try fixture.store.load()?.session?.userID == Self.federatedUser)
    }

    /// Only this device's own user is linked: another user's session, a guest token or an access code is not sent.
    @Test(arguments: [SessionKind.session, .guest, .accessCode])
    func aSessionOfAnotherUserOrKindIsNotSent(kind: SessionKind) async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2, userID: Self.federatedUser)) }
        try fixture.storeSession(refresh: kind == .session ? "refresh-1" : nil, kind: kind)  // user "user", not the device UUID
        try await fixture.session().signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")
        #expect(fixture.transport.requests.map(\.url.path) == [Self.applePath])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
    }

    @Test func anAppleIDOfAnotherUserIsIdentityAlreadyLinkedAndTheSessionIsUntouched() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let transport = StubTransport { request in
            switch request.url.path {
            case "/api/v1/auth/me": .json(200, Samples.profile(deviceID.uuidString.lowercased()))
            default: .error(409, .identityAlreadyLinked, "This Apple ID belongs to another user.")
            }
        }
        let session = fixture.session(transport: transport)
        let before = await session.bootstrap()
        let stored = try fixture.store.load()
        #expect(before.isSignedIn)

        await #expect(throws: LatchkeyError.refusal(409, .identityAlreadyLinked, "This Apple ID belongs to another user.")) {
            try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")
        }
        #expect(transport.requests(to: Self.applePath).first?.bearer == "access-1")
        #expect(try fixture.store.load() == stored)
        #expect(await session.state == before)
        #expect(
            LatchkeyError.refusal(409, .identityAlreadyLinked, "no").description
                == "This sign-in already belongs to another account. Nothing was linked or merged.")
    }

    @Test func aRefusedIdentityTokenIsARejectedSignInNotAnExpiredSession() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let transport = StubTransport { request in
            switch request.url.path {
            case "/api/v1/auth/me": .json(200, Samples.profile(deviceID.uuidString.lowercased()))
            default: .error(401, .invalidToken, "The identity token's nonce does not match.")
            }
        }
        let session = fixture.session(transport: transport)
        let before = await session.bootstrap()
        let stored = try fixture.store.load()

        await #expect(throws: LatchkeyError.refusal(401, .signInRejected, "The identity token's nonce does not match.")) {
            try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")
        }
        #expect(transport.requests.map(\.url.path) == ["/api/v1/auth/me", Self.applePath])  // no refresh, no retry
        #expect(try fixture.store.load() == stored)
        #expect(await session.state == before)
        #expect(await session.state.isSignedIn)
        _ = try await session.currentUser()  // the session still works
    }

    @Test func aRefusedAuthorizationCodeIsAnUpstreamServerErrorAndKeepsTheSession() async throws {
        let fixture = Fixture { _ in .error(502, .upstreamError, "Apple refused the authorization code.") }
        try fixture.storeDeviceSession()
        let stored = try fixture.store.load()
        let error = await #expect(throws: LatchkeyError.self) {
            try await fixture.session().signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce", authorizationCode: "apple-code")
        }
        #expect(error == .failure(502, .upstreamError, "Apple refused the authorization code."))
        #expect(error?.code == .upstreamError)
        #expect(error?.description.contains("identity provider") == true)
        #expect(try fixture.store.load() == stored)
    }

    @Test func theDataOverloadDecodesUTF8() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2, userID: Self.federatedUser)) }
        let session = fixture.session()
        try await session.signInWithApple(identityToken: Data("apple-token".utf8), rawNonce: "raw-nonce", authorizationCode: Data("apple-code".utf8))
        try await session.signInWithApple(identityToken: Data("apple-token-2".utf8), rawNonce: "raw-nonce-2")
        let bodies = try fixture.transport.requests.map { try $0.decodeBody(AppleSignInRequest.self) }
        #expect(
            bodies == [
                AppleSignInRequest(identityToken: "apple-token", rawNonce: "raw-nonce", authorizationCode: "apple-code"),
                AppleSignInRequest(identityToken: "apple-token-2", rawNonce: "raw-nonce-2"),
            ])
    }

    @Test func dataThatIsNotUTF8IsRefusedWithoutARequest() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2)) }
        let session = fixture.session()
        let notUTF8 = Data([0xff, 0xfe, 0x00, 0xc3])
        await #expect(throws: LatchkeyError.self) { try await session.signInWithApple(identityToken: notUTF8, rawNonce: "raw-nonce") }
        await #expect(throws: LatchkeyError.self) {
            try await session.signInWithApple(identityToken: Data("apple-token".utf8), rawNonce: "raw-nonce", authorizationCode: notUTF8)
        }
        #expect(fixture.transport.requests.isEmpty)
    }

    /// Generation fencing: a refresh of the old session that answers after the Apple sign-in cannot overwrite it.
    @Test func aRefreshStillInFlightCannotOverwriteTheAppleSession() async throws {
        let refreshArrived = Gate()
        let releaseRefresh = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh":
                refreshArrived.open()
                await releaseRefresh.wait()
                return .json(200, Samples.pair(2))
            case Self.applePath: return .json(201, Samples.pair(9, userID: Self.federatedUser))
            default: return Samples.me(accepting: ["access-2"], request)
            }
        }
        try fixture.storeSession()  // user "user": not linked
        fixture.clock.advance(by: 1000)
        let session = fixture.session()
        let old = Task { try await session.currentUser() }
        await refreshArrived.wait()

        try await session.signInWithApple(identityToken: "apple-token", rawNonce: "raw-nonce")
        releaseRefresh.open()
        _ = await old.result

        let stored = try #require(try fixture.store.load()?.session)
        #expect(stored.accessToken == "access-9")
        #expect(stored.userID == Self.federatedUser)
        #expect(await session.state.isSignedIn)
        if case .signedIn(let current) = await session.state { #expect(current.userID == Self.federatedUser) }
    }

    // MARK: Token exchange

    @Test func anExternalTokenIsExchangedForAStoredSession() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(4, userID: Self.federatedUser)) }
        let deviceID = try fixture.storeDevice(secret: "secret-1")
        let session = fixture.session()
        let signedIn = try await session.exchangeExternalToken("clerk-token")

        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.count == 1)
        #expect(sent.method == "POST")
        #expect(sent.url.path == Self.exchangePath)
        #expect(sent.header("Authorization") == nil)
        let body = try #require(sent.jsonObject())
        #expect(Set(body.keys) == ["subject_token"])
        #expect(body["subject_token"] as? String == "clerk-token")
        #expect(signedIn.userID == Self.federatedUser)
        let stored = try #require(try fixture.store.load())
        #expect(stored.session?.accessToken == "access-4")
        #expect(stored.session?.refreshToken == "refresh-4")
        #expect(stored.deviceID == deviceID)
        #expect(stored.deviceSecret == "secret-1")
        #expect(await session.state == .signedIn(signedIn))
    }

    @Test func aRefusedExternalTokenIsARejectedSignInAndKeepsTheSession() async throws {
        let fixture = Fixture { _ in .error(401, .invalidToken, "The token's issuer is not configured.") }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        await #expect(throws: LatchkeyError.refusal(401, .signInRejected, "The token's issuer is not configured.")) {
            try await fixture.session().exchangeExternalToken("clerk-token")
        }
        #expect(fixture.transport.requests.map(\.url.path) == [Self.exchangePath])
        #expect(try fixture.store.load() == stored)
    }

    // MARK: Account deletion

    @Test func deletingTheAccountSendsTheBearerThenClearsTheSessionAndKeepsTheDevice() async throws {
        let fixture = Fixture { _ in .json(200, AccountDeletionResponse(userID: "user", revokedSessions: 2, appleTokensRevoked: 1)) }
        let deviceID = try fixture.storeSession()  // user "user": not this device's user, so its device secret stays valid
        let session = fixture.session()

        let deleted = try await session.deleteAccount()

        #expect(deleted == AccountDeletionResponse(userID: "user", revokedSessions: 2, appleTokensRevoked: 1))
        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.count == 1)
        #expect(sent.method == "DELETE")
        #expect(sent.url.path == "/api/v1/users/me")
        #expect(sent.bearer == "access-1")
        let stored = try #require(try fixture.store.load())
        #expect(stored.session == nil)
        #expect(stored.deviceID == deviceID)
        #expect(stored.deviceSecret == "secret-1")
        #expect(await session.state == .signedOut(reason: .requested))
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.currentUser() }
    }

    @Test func deletingThisDevicesUserStartsANewDeviceIdentity() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let oldKey = try #require(try fixture.store.load()?.deviceKey)
        let transport = StubTransport { _ in
            .json(200, AccountDeletionResponse(userID: deviceID.uuidString.lowercased(), revokedSessions: 1, appleTokensRevoked: 0))
        }
        let session = fixture.session(transport: transport)
        let events = await session.events()
        try await session.deleteAccount()
        // The deleted account's ID is retired on the server: this install continues under a new identity.
        let stored = try #require(try fixture.store.load())
        #expect(stored.session == nil)
        #expect(stored.deviceSecret == nil)
        #expect(stored.deviceID != deviceID)
        #expect(stored.deviceKey != nil && stored.deviceKey != oldKey)
        #expect(fixture.defaults.string(forKey: "latchkey.device-id") == stored.deviceID.uuidString)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .deviceIdentityReplaced(.accountDeleted))
    }

    @Test func aFailedDeletionChangesNothing() async throws {
        let fixture = Fixture { _ in .error(503, .serviceUnavailable) }
        try fixture.storeDeviceSession()
        let stored = try fixture.store.load()
        await #expect(throws: LatchkeyError.failure(503, .serviceUnavailable, "no")) {
            try await fixture.session().deleteAccount()
        }
        #expect(try fixture.store.load() == stored)
    }

    @Test func deletingWithARejectedTokenRefreshesAndRetriesOnce() async throws {
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/auth/refresh": .json(200, Samples.pair(2))
            default:
                request.bearer == "access-2"
                    ? .json(200, AccountDeletionResponse(userID: "user", revokedSessions: 1, appleTokensRevoked: 0)) : .error(401, .invalidToken)
            }
        }
        try fixture.storeSession()
        try await fixture.session().deleteAccount()
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/users/me", "/api/v1/auth/refresh", "/api/v1/users/me"])
        #expect(try fixture.store.load()?.session == nil)
    }
}

extension Fixture {
    /// A session built over this fixture's stores and clock with another transport.
    func session(transport: StubTransport) -> LatchkeySession {
        LatchkeySession(
            configuration: .init(serverURL: Self.serverURL), secureStore: self.store, defaults: self.defaults, transport: transport, clock: self.clock
        )
    }

    /// Stores a device identity with `secret` and no session; returns the device ID.
    @discardableResult
    func storeDevice(secret: String?) throws -> UUID {
        let deviceID = UUID()
        try self.store.save(StoredCredentials(deviceID: deviceID, deviceSecret: secret, deviceKey: DeviceKey.generate()))
        self.defaults.set(deviceID.uuidString, forKey: "latchkey.device-id")
        return deviceID
    }

    /// Stores the session of this device's own user (user ID = the lowercase device UUID, as `registerDevice` gives):
    /// `access-1`/`refresh-1`, expiring `lifetime` seconds from now, device secret `secret-1`; returns the device ID.
    @discardableResult
    func storeDeviceSession(lifetime: TimeInterval = 900) throws -> UUID {
        let deviceID = UUID()
        let session = StoredSession(
            kind: .session, userID: deviceID.uuidString.lowercased(), sessionID: "session-1", accessToken: "access-1",
            accessTokenExpiresAt: self.clock.now().addingTimeInterval(lifetime), refreshToken: "refresh-1")
        try self.store.save(StoredCredentials(deviceID: deviceID, deviceSecret: "secret-1", deviceKey: DeviceKey.generate(), session: session))
        self.defaults.set(deviceID.uuidString, forKey: "latchkey.device-id")
        return deviceID
    }
}

extension TransportRequest {
    /// The body as a JSON object, to check which keys were sent.
    func jsonObject() -> [String: Any]? {
        self.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}
