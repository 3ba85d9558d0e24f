import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/apple` against the local Apple peer: every check of the identity token, identity
/// mapping and linking, the authorization-code exchange and revocation at account deletion.
@Suite(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct AppleSignInTests {
    typealias Peer = IdentityProviderPeer

    static func signIn(
        _ client: some TestClientProtocol, token: String, rawNonce: String, code: String? = nil, bearer: String? = nil
    ) async throws -> TestResponse {
        try await client.send(
            .post, "/api/v1/auth/apple", bearer: bearer, body: AppleSignInRequest(identityToken: token, rawNonce: rawNonce, authorizationCode: code))
    }

    static func expectRefused(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unauthorized, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .invalidToken, sourceLocation: sourceLocation)
    }

    @Test(arguments: Transport.allCases)
    func aFirstSignInCreatesAUserAndTheSameAppleIDSignsInAsTheSameUserAgain(transport: Transport) async throws {
        let server = try await TestServer.federated()
        let subject = "001234.\(UUID().uuidString.prefix(12)).0001"
        try await server.test(transport) { client in
            let firstNonce = UUID().uuidString
            let first = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: firstNonce, subject: subject)), rawNonce: firstNonce)
            #expect(first.status == .created, "\(first.text)")
            let pair = try first.decode(TokenPairResponse.self)
            #expect(UUID(uuidString: pair.userID) != nil)
            #expect(pair.userID != subject)  // our own UUID, not Apple's ID
            #expect(pair.deviceSecret == nil)

            let secondNonce = UUID().uuidString
            let second = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: secondNonce, subject: subject)), rawNonce: secondNonce)
            #expect(second.status == .ok)
            #expect(try second.decode(TokenPairResponse.self).userID == pair.userID)

            let me = try await client.send(.get, "/api/v1/auth/me", bearer: pair.accessToken)
            let profile = try me.decode(UserProfile.self)
            #expect(profile.kind == .federated)
            #expect(profile.identities.map(\.provider) == ["apple"])
            #expect(profile.identities.map(\.subject) == [subject])
            // The session refreshes like any other.
            #expect(try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: pair.refreshToken)).status == .ok)
        }
    }

    @Test func theServicesIDIsAnAcceptedAudienceToo() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(
                claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString, ["aud": Peer.webClientID]))
            #expect(try await Self.signIn(client, token: token, rawNonce: nonce).status == .created)
        }
    }

    @Test func emailVerifiedAndIsPrivateEmailMayBeBooleansOrStrings() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            for (verified, isPrivate) in [("true", "false") as (Any, Any), (true, false), (false, true)] {
                let nonce = UUID().uuidString
                let token = try await Peer.appleToken(
                    claims: server.appleClaims(
                        rawNonce: nonce, subject: UUID().uuidString, ["email_verified": verified, "is_private_email": isPrivate]))
                #expect(try await Self.signIn(client, token: token, rawNonce: nonce).status == .created)
            }
        }
    }

    /// One bad identity token per check; each is refused with 401 and creates nothing.
    enum BadToken: String, CaseIterable, CustomStringConvertible {
        case wrongAudience, wrongIssuer, expired, issuedInTheFuture, unknownKid, forgedSignature, hs256WithThePublicKey, algNone, es256,
            nonceMismatch, missingNonce, missingKid
        var description: String { self.rawValue }
    }

    @Test(arguments: BadToken.allCases)
    func aBadIdentityTokenIs401AndCreatesNoUser(bad: BadToken) async throws {
        let server = try await TestServer.federated()
        let subject = "bad.\(UUID().uuidString)"
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            var claims = server.appleClaims(rawNonce: nonce, subject: subject)
            var rawNonce = nonce
            var omit: [String] = []
            let now = Int(server.clock.now().timeIntervalSince1970)
            var (signWith, kid, alg): (String, String??, String) = ("apple-1", .none, "RS256")
            switch bad {
            case .wrongAudience: claims["aud"] = "com.someone.else"
            case .wrongIssuer: claims["iss"] = "https://appleid.apple.com.evil.example"
            case .expired: (claims["iat"], claims["exp"]) = (now - 700, now - 1)
            case .issuedInTheFuture: (claims["iat"], claims["exp"]) = (now + 120, now + 720)  // leeway is 60 s
            case .unknownKid: (signWith, kid) = ("rogue", .some("apple-9"))
            case .forgedSignature: (signWith, kid) = ("rogue", .some("apple-1"))
            case .hs256WithThePublicKey: alg = "HS256"
            case .algNone: alg = "none"
            case .es256: alg = "ES256"
            case .nonceMismatch: rawNonce = "another-nonce"
            case .missingNonce: omit = ["nonce"]
            case .missingKid: kid = .some(nil)
            }
            let token = try await Peer.appleToken(claims: claims, omit: omit, signWith: signWith, kid: kid, alg: alg)
            Self.expectRefused(try await Self.signIn(client, token: token, rawNonce: rawNonce))
            // Nothing was created: the same Apple ID, correctly signed, is a new user now.
            let fresh = UUID().uuidString
            let good = try await Peer.appleToken(claims: server.appleClaims(rawNonce: fresh, subject: subject))
            #expect(try await Self.signIn(client, token: good, rawNonce: fresh).status == .created)
        }
    }

    @Test func anIatWithinTheLeewayIsAccepted() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let now = Int(server.clock.now().timeIntervalSince1970)
            let token = try await Peer.appleToken(
                claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString, ["iat": now + 30, "exp": now + 630]))
            #expect(try await Self.signIn(client, token: token, rawNonce: nonce).status == .created)
        }
    }

    @Test func aNonceIsAcceptedOnceOnly() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString))
            #expect(try await Self.signIn(client, token: token, rawNonce: nonce).status == .created)
            let replay = try await Self.signIn(client, token: token, rawNonce: nonce)
            Self.expectRefused(replay)
            #expect(replay.envelope?.error.message.contains("used before") == true)
            // Another token with the same nonce is a replay too.
            let again = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString))
            Self.expectRefused(try await Self.signIn(client, token: again, rawNonce: nonce))
        }
    }

    @Test func appleKeysAreCachedAndAnUnknownKidRefetchesAtMostOnceAMinute() async throws {
        let tag = UUID().uuidString
        let server = try await TestServer.federated(tag: tag)
        try await server.test(.router) { client in
            for _ in 0..<3 {
                let nonce = UUID().uuidString
                let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString), signWith: "apple-2")
                #expect(try await Self.signIn(client, token: token, rawNonce: nonce).status == .created)
            }
            #expect(try await Peer.fetches(tag: tag) == 1)
            // An unknown kid: one refetch, then none for a minute however many such tokens come.
            server.clock.advance(by: 61)
            for _ in 0..<3 {
                let nonce = UUID().uuidString
                let token = try await Peer.appleToken(
                    claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString), signWith: "rogue", kid: .some("apple-new"))
                Self.expectRefused(try await Self.signIn(client, token: token, rawNonce: nonce))
            }
            #expect(try await Peer.fetches(tag: tag) == 2)
            server.clock.advance(by: 61)
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(
                claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString), signWith: "rogue", kid: .some("apple-new"))
            Self.expectRefused(try await Self.signIn(client, token: token, rawNonce: nonce))
            #expect(try await Peer.fetches(tag: tag) == 3)
            // Past Cache-Control's max-age (3600 s) the keys are fetched again.
            server.clock.advance(by: 3600)
            let later = UUID().uuidString
            let valid = try await Peer.appleToken(claims: server.appleClaims(rawNonce: later, subject: UUID().uuidString))
            #expect(try await Self.signIn(client, token: valid, rawNonce: later).status == .created)
            #expect(try await Peer.fetches(tag: tag) == 4)
        }
    }

    /// The device's event socket hears `identity.linked` when the device user links Sign in with Apple.
    @Test func linkingAppleIsToldOnTheUsersEventSocket() async throws {
        let server = try await TestServer.federated()
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: device.accessToken)
            #expect(try await socket.next().type == "connected")
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: "events.\(UUID().uuidString)"))
            #expect(try await Self.signIn(client, token: token, rawNonce: nonce, bearer: device.accessToken).status == .ok)
            let linked = try await socket.next()
            #expect(linked.type == "identity.linked")
            #expect(linked.provider == "apple")
        }
    }

    @Test(arguments: Transport.allCases)
    func aDeviceSessionLinksAppleAndKeepsItsUserIDAndData(transport: Transport) async throws {
        let server = try await TestServer.federated()
        try await server.test(transport) { client in
            let device = try await client.registerDevice()
            let nonce = UUID().uuidString
            let subject = "link.\(UUID().uuidString)"
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject))
            let linked = try await Self.signIn(client, token: token, rawNonce: nonce, bearer: device.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            let pair = try linked.decode(TokenPairResponse.self)
            #expect(pair.userID == device.userID)
            let profile = try await client.send(.get, "/api/v1/auth/me", bearer: pair.accessToken).decode(UserProfile.self)
            #expect(profile.kind == .device)  // how the user came to exist does not change
            #expect(profile.identities.map(\.subject) == [subject])
            #expect(profile.devices.map(\.deviceID) == [device.userID])
            // The device session lives on, and signing in with Apple later (a reinstall) finds the same user.
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: device.accessToken).status == .ok)
            let later = UUID().uuidString
            let again = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: later, subject: subject)), rawNonce: later)
            #expect(again.status == .ok)
            #expect(try again.decode(TokenPairResponse.self).userID == device.userID)
        }
    }

    @Test func linkingAnAppleIDThatBelongsToAnotherUserIs409AndMergesNothing() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let subject = "taken.\(UUID().uuidString)"
            let first = UUID().uuidString
            let owner = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: first, subject: subject)), rawNonce: first)
            let ownerID = try owner.decode(TokenPairResponse.self).userID
            let device = try await client.registerDevice()
            let nonce = UUID().uuidString
            let refused = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject)), rawNonce: nonce,
                bearer: device.accessToken)
            #expect(refused.status == .conflict)
            #expect(refused.envelope?.error.code == .identityAlreadyLinked)
            let profile = try await client.send(.get, "/api/v1/auth/me", bearer: device.accessToken).decode(UserProfile.self)
            #expect(profile.identities.isEmpty)
            // Still the owner's.
            let later = UUID().uuidString
            let signIn = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: later, subject: subject)), rawNonce: later)
            #expect(try signIn.decode(TokenPairResponse.self).userID == ownerID)
        }
    }

    @Test func aBearerThatDoesNotVerifyIs401AndAGuestCannotLink() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString))
            Self.expectRefused(try await Self.signIn(client, token: token, rawNonce: nonce, bearer: "not-a-token"))
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [.init("X-Device-ID")!: UUID().uuidString])
            let guestToken = try guest.decode(GuestSessionResponse.self).accessToken
            let refused = try await Self.signIn(client, token: token, rawNonce: nonce, bearer: guestToken)
            #expect(refused.status == .forbidden)
        }
    }

    @Test func theAuthorizationCodeIsExchangedAndAccountDeletionRevokesAppleTokens() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let subject = "code.\(UUID().uuidString)"
            let code = "c-\(UUID().uuidString)"
            try await Peer.registerCode(code, subject: subject)
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject))
            let signIn = try await Self.signIn(client, token: token, rawNonce: nonce, code: code)
            #expect(signIn.status == .created, "\(signIn.text)")
            let pair = try signIn.decode(TokenPairResponse.self)
            #expect(try await Peer.revokedTokens(of: subject).isEmpty)

            let deletion = try await client.send(.delete, "/api/v1/users/me", bearer: pair.accessToken)
            #expect(deletion.status == .ok, "\(deletion.text)")
            let answer = try deletion.decode(AccountDeletionResponse.self)
            #expect(answer.userID == pair.userID)
            #expect(answer.appleTokensRevoked == 1)
            #expect(try await Peer.revokedTokens(of: subject).count == 1)  // the refresh token the peer issued for the code
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: pair.accessToken).status == .unauthorized)
            #expect(
                try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: pair.refreshToken)).status == .unauthorized)
        }
    }

    @Test func aCodeAppleRefusesIs502AndCreatesNoUser() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let subject = "badcode.\(UUID().uuidString)"
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject))
            let refused = try await Self.signIn(client, token: token, rawNonce: nonce, code: "never-issued")
            #expect(refused.status == .badGateway)
            #expect(refused.envelope?.error.code == .upstreamError)
            #expect(refused.envelope?.error.message.contains("invalid_grant") == true)
            let fresh = UUID().uuidString
            let later = try await Self.signIn(
                client, token: try await Peer.appleToken(claims: server.appleClaims(rawNonce: fresh, subject: subject)), rawNonce: fresh)
            #expect(later.status == .created)  // the refused attempt created nothing
        }
    }

    @Test func unreachableAppleKeysAre502NotA500() async throws {
        let server = try await TestServer.federated { configuration in
            configuration.apple.jwksURL = "http://127.0.0.1:\(try! ServeCommandTests.freePort())/auth/keys"
        }
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString))
            let answer = try await Self.signIn(client, token: token, rawNonce: nonce)
            #expect(answer.status == .badGateway, "\(answer.text)")
            #expect(answer.envelope?.error.code == .upstreamError)
        }
    }

    @Test func aMalformedSignInWithAppleKeyStopsTheServerFromStarting() async throws {
        await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.federated { configuration in configuration.apple.privateKeyPEM = "not a key" }
        }
    }

    @Test func theCLIDeletesAnAppleUserAfterRevokingItsTokenAtApple() async throws {
        let server = try await TestServer.federated()
        let base = try Peer.base()
        let key = try await Peer.developerKey()
        try await server.test(.router) { client in
            let subject = "cli.\(UUID().uuidString)"
            let code = "c-\(UUID().uuidString)"
            try await Peer.registerCode(code, subject: subject)
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject))
            let pair = try await Self.signIn(client, token: token, rawNonce: nonce, code: code).decode(TokenPairResponse.self)
            let run = try await LatchkeyCLI.run(
                ["users", "delete", pair.userID, "--yes", "--database", server.databasePath], masterKey: TestServer.masterKey,
                workingDirectory: server.directory,
                environment: [
                    "LATCHKEY_APPLE_CLIENT_IDS": Peer.appClientID, "LATCHKEY_APPLE_REVOKE_URL": "\(base)/auth/revoke",
                    "LATCHKEY_APPLE_TEAM_ID": key.teamID, "LATCHKEY_APPLE_KEY_ID": key.keyID, "LATCHKEY_APPLE_PRIVATE_KEY": key.pem,
                ])
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("1 Apple tokens revoked"))
            #expect(!run.stdout.contains(pair.refreshToken) && !run.stderr.contains(key.pem))
            #expect(try await Peer.revokedTokens(of: subject).count == 1)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: pair.accessToken).status == .unauthorized)
        }
    }
}
