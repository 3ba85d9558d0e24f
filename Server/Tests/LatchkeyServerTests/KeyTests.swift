import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `GET /.well-known/jwks.json`, `GET /.well-known/openid-configuration` and signing-key rotation.
@Suite struct KeyTests {
    @Test(arguments: Transport.allCases)
    func theJWKSListsOneP256KeyNamedByTheTokensKid(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.get, "/.well-known/jwks.json")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let keys = try response.decode(JSONWebKeySet.self).keys
            #expect(keys.count == 1)
            let key = try #require(keys.first)
            #expect(key.kty == "EC")
            #expect(key.crv == "P-256")
            #expect(key.alg == "ES256")
            #expect(key.use == "sig")
            #expect(Base64URL.decode(key.x)?.count == 32)
            #expect(Base64URL.decode(key.y)?.count == 32)

            let header = try Forge.header(of: device.accessToken)
            #expect(header.alg == "ES256")
            #expect(header.kid == key.kid)
        }
    }

    @Test func theJWKSHoldsNoPrivateKeyMaterial() async throws {
        try await withServer(.router) { client, _ in
            let response = try await client.send(.get, "/.well-known/jwks.json")
            let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            let keys = try #require(object?["keys"] as? [[String: Any]])
            for key in keys {
                #expect(key["d"] == nil)
                #expect(Set(key.keys) == ["kty", "crv", "x", "y", "kid", "use", "alg"])
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func theOpenIDConfigurationNamesTheIssuerAndTheJWKSURL(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.get, "/.well-known/openid-configuration")
            #expect(response.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            #expect(object["issuer"] as? String == TestServer.issuer)
            #expect(object["jwks_uri"] as? String == TestServer.issuer + "/.well-known/jwks.json")
            #expect(object["id_token_signing_alg_values_supported"] as? [String] == ["ES256"])
        }
    }

    @Test func theIssuerInTokensIsTheOneTheDiscoveryDocumentNames() async throws {
        try await withServer(.router, configure: { $0.publicURL = "https://auth.example.com/" }) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.get, "/.well-known/openid-configuration")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            #expect(object["issuer"] as? String == "https://auth.example.com")
            #expect(object["jwks_uri"] as? String == "https://auth.example.com/.well-known/jwks.json")
            #expect(try Forge.claims(of: device.accessToken).issuer == "https://auth.example.com")
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func afterRotationTheJWKSListsBothKeysNewestFirst(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let before = try await client.jwks().keys
            server.clock.advance(by: 1)
            let rotated = try await server.services.keyRing.rotate(publishAhead: 0)
            let after = try await client.jwks().keys
            #expect(after.count == 2)
            #expect(after.map(\.kid) == [rotated.kid] + before.map(\.kid))
            #expect(rotated.kid != before.first?.kid)
        }
    }

    /// `keys rotate` twice in one second (or on a clock that has not moved) must still publish the signing key first.
    @Test func theSigningKeyIsListedFirstEvenWhenKeysAreCreatedInTheSameInstant() async throws {
        try await withServer(.router) { client, server in
            for _ in 0..<5 {
                let rotated = try await server.services.keyRing.rotate(publishAhead: 0)
                let signingKID = try Forge.header(of: try await client.registerDevice().accessToken).kid
                #expect(signingKID == rotated.kid)
                #expect(try await client.jwks().keys.first?.kid == signingKID)
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func aTokenIssuedBeforeRotationStillVerifies(transport: Transport) async throws {
        // No verification cache: the old token must really be checked against the retired key.
        try await withServer(transport, configure: { $0.verificationCacheCapacity = 0 }) { client, server in
            let device = try await client.registerDevice()
            let oldKID = try Forge.header(of: device.accessToken).kid
            try await server.services.keyRing.rotate(publishAhead: 0)
            let response = try await client.validate(device.accessToken)
            #expect(response.status == .ok)
            #expect(try response.decode(ValidateTokenResponse.self).sub == device.userID)
            #expect(try await client.me(device.accessToken).status == .ok)
            #expect(try await client.jwks().keys.contains { $0.kid == oldKID })
        }
    }

    @Test(arguments: Transport.allCases)
    func aTokenIssuedAfterRotationCarriesTheNewKid(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let before = try await client.registerDevice()
            let rotated = try await server.services.keyRing.rotate(publishAhead: 0)
            let after = try await client.registerDevice()
            let kid = try Forge.header(of: after.accessToken).kid
            #expect(kid == rotated.kid)
            #expect(kid != (try Forge.header(of: before.accessToken).kid))
            try await expectAccepted(after.accessToken, by: client)
        }
    }

    @Test func aRefreshAfterRotationSignsWithTheNewKey() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let rotated = try await server.services.keyRing.rotate(publishAhead: 0)
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            #expect(try Forge.header(of: refreshed.accessToken).kid == rotated.kid)
        }
    }

    @Test func aTokenSignedByTheRetiredKeyStillGetsCheckedForForgery() async throws {
        try await withServer(.router, configure: { $0.verificationCacheCapacity = 0 }) { client, server in
            let device = try await client.registerDevice()
            try await server.services.keyRing.rotate(publishAhead: 0)
            try await expectRefused(try Forge.flippingSignatureBit(device.accessToken), by: client)
            try await expectAccepted(device.accessToken, by: client)
        }
    }
}

/// Issue 29: a rotated key is published before it signs, so a verifier with a cached JWKS never meets an unknown kid.
@Suite struct KeyPrePublicationTests {
    @Test func aRotatedKeyIsPublishedAtOnceAndSignsOnlyAfterPublishAhead() async throws {
        try await withServer(.live, configure: { $0.keyPublishAhead = 360 }) { client, server in
            let oldKID = try #require(try await client.jwks().keys.first?.kid)
            let rotated = try await server.services.keyRing.rotate()
            // Right after the rotation: the JWKS holds both keys, and tokens still carry the old kid.
            #expect(Set(try await client.jwks().keys.map(\.kid)) == [oldKID, rotated.kid])
            #expect(try Forge.header(of: try await client.registerDevice().accessToken).kid == oldKID)
            server.clock.advance(by: 359)
            #expect(try Forge.header(of: try await client.registerDevice().accessToken).kid == oldKID)
            #expect(Set(try await client.jwks().keys.map(\.kid)) == [oldKID, rotated.kid])
            // After publish-ahead the new key signs, without a reload; the old key stays published (keys.retention).
            server.clock.advance(by: 1)
            let after = try await client.registerDevice()
            #expect(try Forge.header(of: after.accessToken).kid == rotated.kid)
            try await expectAccepted(after.accessToken, by: client)
            #expect(Set(try await client.jwks().keys.map(\.kid)) == [oldKID, rotated.kid])
        }
    }

    @Test func revokingTheSigningKeyWhileARotationWaitsMakesThePublishedKeySignAtOnce() async throws {
        try await withServer(.router, configure: { $0.keyPublishAhead = 360 }) { client, server in
            let oldKID = try #require(try await client.jwks().keys.first?.kid)
            let rotated = try await server.services.keyRing.rotate()
            #expect(try await server.services.revokeSigningKey(kid: oldKID))
            #expect(try await client.jwks().keys.map(\.kid) == [rotated.kid])
            #expect(try Forge.header(of: try await client.registerDevice().accessToken).kid == rotated.kid)
            #expect(try await server.services.keyRing.records().count == 2)  // no third key was made
        }
    }

    @Test func rotateNowSignsAtOnce() async throws {
        try await withServer(.router, configure: { $0.keyPublishAhead = 360 }) { client, server in
            let rotated = try await server.services.keyRing.rotate(publishAhead: 0)
            #expect(try Forge.header(of: try await client.registerDevice().accessToken).kid == rotated.kid)
        }
    }
}
