import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `GET /api/v1/validate-token`, `GET /api/v1/users/me`, `GET /api/v1/auth/me`, and every way a bearer
/// token can be wrong: missing, garbage, expired, tampered, unsigned, algorithm-swapped, foreign.
///
/// Each forgery test first shows the genuine token is accepted, so a server that refused everything
/// could not pass it.
@Suite struct TokenVerificationTests {
    // MARK: Valid tokens

    @Test(arguments: Transport.allCases)
    func validateTokenDescribesAValidSessionToken(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let device = try await client.registerDevice()
            let response = try await client.validate(device.accessToken)
            #expect(response.status == .ok)
            let expiry = Int64(server.clock.now().timeIntervalSince1970) + 900
            #expect(try response.decode(ValidateTokenResponse.self) == ValidateTokenResponse(sub: device.userID, exp: expiry, kind: .session))
            let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            #expect(object?["valid"] as? Bool == true)
            #expect(object?["kind"] as? String == "session")
        }
    }

    @Test(arguments: Transport.allCases, ["/api/v1/users/me", "/api/v1/auth/me"])
    func theProfileDescribesTheDeviceUser(transport: Transport, path: String) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.get, path, bearer: device.accessToken)
            #expect(response.status == .ok)
            let profile = try response.decode(UserProfile.self)
            #expect(profile.userID == device.userID)
            #expect(profile.kind == .device)
            #expect(profile.tokenKind == .session)
            #expect(profile.sessionID == device.sessionID)
            #expect(profile.identities.isEmpty)
            #expect(profile.devices.map(\.deviceID) == [device.userID])
        }
    }

    @Test func usersMeAndAuthMeAnswerTheSameBody() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let users = try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken)
            let auth = try await client.send(.get, "/api/v1/auth/me", bearer: device.accessToken)
            #expect(users.status == .ok)
            #expect(auth.status == .ok)
            #expect(users.text == auth.text)
        }
    }

    @Test func aTokenIsValidUntilJustBeforeItExpires() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            server.clock.advance(by: 899)
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    @Test func theSessionLifetimeIsConfigurable() async throws {
        try await withServer(.router, configure: { $0.tokens.sessionLifetime = 60 }) { client, server in
            let device = try await client.registerDevice()
            #expect(device.expiresIn == 60)
            #expect(try Forge.claims(of: device.accessToken).expiresAt == Int64(server.clock.now().timeIntervalSince1970) + 60)
            try await expectAccepted(device.accessToken, by: client)
            server.clock.advance(by: 61)
            try await expectRefused(device.accessToken, by: client)
        }
    }

    // MARK: Missing and garbage

    @Test(arguments: Transport.allCases)
    func validateTokenWithoutABearerIs401ValidFalse(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.get, "/api/v1/validate-token")
            #expect(response.status == .unauthorized)
            let body = try response.decode(InvalidTokenResponse.self)
            #expect(body.valid == false)
            #expect(body.error.code == .invalidToken)
            #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
        }
    }

    @Test(arguments: Transport.allCases, ["/api/v1/users/me", "/api/v1/auth/me"])
    func theProfileWithoutABearerIs401(transport: Transport, path: String) async throws {
        try await withServer(transport) { client, _ in
            expectUnauthorized(try await client.send(.get, path))
        }
    }

    @Test(arguments: Transport.allCases)
    func aGarbageBearerIs401(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            try await expectRefused("abc", by: client)
        }
    }

    @Test(arguments: ["", "a.b", "a.b.c", "a.b.c.d", "..", "eyJhbGciOiJFUzI1NiJ9..", "\(String(repeating: "x", count: 4096))"])
    func malformedBearersAre401(token: String) async throws {
        try await withServer(.router) { client, _ in
            let response = try await client.validate(token)
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            #expect((try? response.decode(InvalidTokenResponse.self))?.valid == false)
        }
    }

    // MARK: Expired

    @Test(arguments: Transport.allCases)
    func anExpiredTokenIs401(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            server.clock.advance(by: 901)
            try await expectRefused(device.accessToken, by: client)
        }
    }

    // MARK: Forged

    @Test(arguments: Transport.allCases)
    func aTokenWithAChangedPayloadCharacterIs401(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            let forged = try Forge.flippingPayloadCharacter(device.accessToken)
            #expect(forged != device.accessToken)
            try await expectRefused(forged, by: client)
        }
    }

    @Test func aTokenWhosePayloadNamesAnotherUserIs401() async throws {
        try await withServer(.router) { client, _ in
            let attacker = try await client.registerDevice()
            let victim = try await client.registerDevice()
            try await expectAccepted(attacker.accessToken, by: client)
            let forged = try Forge.rewritingClaims(attacker.accessToken) { claims in
                claims.subject = victim.userID
                claims.sessionID = victim.sessionID
                claims.deviceID = victim.userID
            }
            try await expectRefused(forged, by: client)
        }
    }

    @Test func aTokenWithAnExtendedExpiryIs401() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            server.clock.advance(by: 901)
            let forged = try Forge.rewritingClaims(device.accessToken) { $0.expiresAt += 86_400 }
            try await expectRefused(forged, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func aTokenWithAFlippedSignatureBitIs401(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            try await expectRefused(try Forge.flippingSignatureBit(device.accessToken), by: client)
        }
    }

    @Test func aTokenWithoutItsSignatureIs401() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            var jwt = try CompactJWT(device.accessToken)
            jwt.signature = ""
            try await expectRefused(jwt.description, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func anAlgNoneTokenIs401(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            let forged = try Forge.algNone(device.accessToken)
            #expect(try Forge.header(of: forged) == JWTHeader(alg: "none", typ: "JWT", kid: nil))
            try await expectRefused(forged, by: client)
        }
    }

    /// The secrets an algorithm-confusion attacker would MAC with.
    enum ConfusionSecret: String, CaseIterable, CustomStringConvertible {
        case publicKeyPEM, publicKeyPEMWithNewline, publicKeyDER, publicKeyX963, jwkJSON, arbitrary
        var description: String { self.rawValue }

        func bytes(for key: JSONWebKey) throws -> Data {
            let forms = PublicKeyForms(jwk: key)
            switch self {
            case .publicKeyPEM: return Data(try forms.pem.utf8)
            case .publicKeyPEMWithNewline: return Data((try forms.pem + "\n").utf8)
            case .publicKeyDER: return try forms.der
            case .publicKeyX963: return try forms.x963
            case .jwkJSON: return try forms.jwkJSON
            case .arbitrary: return Data("secret".utf8)
            }
        }
    }

    @Test(arguments: ConfusionSecret.allCases)
    func anHS256TokenIs401WhateverItIsMACedWith(secret: ConfusionSecret) async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)
            let key = try #require(try await client.jwks().keys.first)
            // The forged secrets are the server's real public key, byte for byte.
            let stored = try #require(try await server.services.keyRing.records().first { $0.kid == key.kid })
            #expect(try PublicKeyForms(jwk: key).pem == stored.publicKeyPEM)
            let forged = try Forge.hs256(device.accessToken, secret: try secret.bytes(for: key))
            #expect(try Forge.header(of: forged).alg == "HS256")
            #expect(try Forge.header(of: forged).kid == key.kid)
            try await expectRefused(forged, by: client)
        }
    }

    @Test func anHS256TokenIs401OverALiveSocket() async throws {
        try await withServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let key = try #require(try await client.jwks().keys.first)
            try await expectRefused(try Forge.hs256(device.accessToken, secret: try PublicKeyForms(jwk: key).pem.data(using: .utf8)!), by: client)
        }
    }

    // MARK: Foreign

    @Test(arguments: Transport.allCases)
    func aTokenFromAnotherServerIs401(transport: Transport) async throws {
        let other = try await TestServer.make(configure: { $0.masterKey = Data(repeating: 9, count: 32).base64EncodedString() })
        let foreign: TokenPairResponse
        do {
            foreign = try await other.services.devices.register(deviceID: UUID().uuidString.lowercased(), deviceSecret: nil, proof: nil).tokens
            await other.close()
        } catch {
            await other.close()
            throw error
        }
        #expect(try Forge.claims(of: foreign.accessToken).issuer == TestServer.issuer)

        try await withServer(transport) { client, _ in
            // The same device registers here too, so only the signing key tells the tokens apart… and the session.
            _ = try await client.registerDevice(UUID(uuidString: foreign.userID)!)
            try await expectRefused(foreign.accessToken, by: client)
        }
    }

    @Test func aTokenFromAServerWithAnotherPublicURLIs401() async throws {
        let other = try await TestServer.make(configure: { $0.publicURL = "https://elsewhere.example" })
        let foreign: TokenPairResponse
        do {
            foreign = try await other.services.devices.register(deviceID: UUID().uuidString.lowercased(), deviceSecret: nil, proof: nil).tokens
            await other.close()
        } catch {
            await other.close()
            throw error
        }
        #expect(try Forge.claims(of: foreign.accessToken).issuer == "https://elsewhere.example")
        try await withServer(.router) { client, _ in
            try await expectRefused(foreign.accessToken, by: client)
        }
    }

    /// A second server process on the same database signs with the same key: only the claim tells the
    /// tokens apart, so this isolates the issuer (and audience) check from the signature check.
    enum ForeignClaim: String, CaseIterable, CustomStringConvertible {
        case issuer, audience
        var description: String { self.rawValue }
    }

    @Test(arguments: ForeignClaim.allCases)
    func aCorrectlySignedTokenForAnotherIssuerOrAudienceIs401(claim: ForeignClaim) async throws {
        let server = try await TestServer.make()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let sibling = try await TestServer.make(clock: server.clock, directory: server.directory, database: server.databasePath) {
                configuration in
                switch claim {
                case .issuer: configuration.publicURL = "https://elsewhere.example"
                case .audience: configuration.audience = "someone-else"
                }
            }
            let foreign: TokenPairResponse
            do {
                foreign = try await sibling.services.sessions.startSession(userID: device.userID, deviceID: device.userID, proof: nil, amr: [.device])
                await sibling.close()
            } catch {
                await sibling.close()
                throw error
            }
            #expect(try Forge.header(of: foreign.accessToken).kid == Forge.header(of: device.accessToken).kid)
            let claims = try Forge.claims(of: foreign.accessToken)
            switch claim {
            case .issuer: #expect(claims.issuer == "https://elsewhere.example")
            case .audience: #expect(claims.audience == "someone-else")
            }
            try await expectAccepted(device.accessToken, by: client)
            try await expectRefused(foreign.accessToken, by: client)
        }
    }
}
