import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// A third-party identity provider (a Clerk-shaped issuer on the local peer): its tokens as Bearer on
/// every JWT route, provisioning on first sight, token exchange, and each check.
@Suite(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct IdentityProviderTests {
    typealias Peer = IdentityProviderPeer

    @Test(arguments: Transport.allCases)
    func aClerkTokenIsABearerOnJWTRoutesAndMapsToOneLatchkeyUser(transport: Transport) async throws {
        let server = try await TestServer.federated()
        try await server.test(transport) { client in
            let subject = "user_\(UUID().uuidString.prefix(12))"
            let token = try await Peer.clerkToken(claims: server.clerkClaims(subject: subject, ["azp": Peer.clerkParty]))
            let me = try await client.send(.get, "/api/v1/auth/me", bearer: token)
            #expect(me.status == .ok, "\(me.text)")
            let profile = try me.decode(UserProfile.self)
            #expect(UUID(uuidString: profile.userID) != nil)
            #expect(profile.kind == .federated)
            #expect(profile.tokenKind == .external)
            #expect(profile.provider == "clerk")
            #expect(profile.providerSubject == subject)
            #expect(profile.identities.map(\.provider) == ["clerk"])
            // A later token of the same Clerk user (Clerk's tokens live a minute) is the same Latchkey user.
            server.clock.advance(by: 30)
            let next = try await Peer.clerkToken(claims: server.clerkClaims(subject: subject))
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: next).decode(UserProfile.self).userID == profile.userID)
            let validated = try await client.send(.get, "/api/v1/validate-token", bearer: next)
            #expect(validated.status == .ok, "\(validated.text)")
        }
    }

    @Test func clerkKeysAreFetchedOnceAndVerificationIsNetworklessAfterwards() async throws {
        let tag = UUID().uuidString
        let server = try await TestServer.federated(tag: tag)
        try await server.test(.router) { client in
            for _ in 0..<5 {
                let token = try await Peer.clerkToken(claims: server.clerkClaims())
                #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
            }
            #expect(try await Peer.fetches(tag: "\(tag)-clerk") == 1)
        }
    }

    enum BadToken: String, CaseIterable, CustomStringConvertible {
        case expired, notYetValid, issuedInTheFuture, forgedSignature, unknownKid, partyNotAuthorized, wrongIssuer, noSubject
        var description: String { self.rawValue }
    }

    @Test(arguments: BadToken.allCases)
    func aBadProviderTokenIs401(bad: BadToken) async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let now = Int(server.clock.now().timeIntervalSince1970)
            var claims = server.clerkClaims()
            var omit: [String] = []
            var signWith = "clerk-1"
            switch bad {
            case .expired: (claims["iat"], claims["nbf"], claims["exp"]) = (now - 120, now - 120, now - 1)
            case .notYetValid: claims["nbf"] = now + 300
            case .issuedInTheFuture: (claims["iat"], claims["exp"]) = (now + 300, now + 360)
            case .forgedSignature: signWith = "rogue"
            case .unknownKid: signWith = "rogue"  // kid "rogue" is published nowhere
            case .partyNotAuthorized: claims["azp"] = "https://evil.example"
            case .wrongIssuer: claims["iss"] = "https://clerk.evil.example"
            case .noSubject: omit = ["sub"]
            }
            var token = try await Peer.clerkToken(claims: claims, omit: omit, signWith: signWith)
            if bad == .forgedSignature {
                // The rogue key's signature under the published kid.
                token = try Self.replacingKid(in: token, with: "clerk-1")
            }
            let answer = try await client.send(.get, "/api/v1/auth/me", bearer: token)
            #expect(answer.status == .unauthorized, "\(answer.text)")
            #expect(answer.envelope?.error.code == .invalidToken)
        }
    }

    /// With named audiences a token may omit `azp` (native clients do); with `audiences: any` nothing but `azp` names
    /// the app a token is for, so a token without it is refused.
    @Test func aTokenWithoutAzpPassesOnlyWhenTheProviderNamesItsAudiences() async throws {
        let any = try await TestServer.federated()
        try await any.test(.live) { client in
            let token = try await Peer.clerkToken(claims: any.clerkClaims(), omit: ["azp"])
            let refused = try await client.send(.get, "/api/v1/auth/me", bearer: token)
            #expect(refused.status == .unauthorized)
            #expect(refused.envelope?.error.code == .invalidToken)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: try await Peer.clerkToken(claims: any.clerkClaims())).status == .ok)
        }
        let named = try await TestServer.federated { configuration in
            configuration.identityProviders[0].audiences = ["https://api.example.com"]
            configuration.identityProviders[0].acceptsAnyAudience = false
        }
        try await named.test(.live) { client in
            let token = try await Peer.clerkToken(claims: named.clerkClaims(["aud": "https://api.example.com"]), omit: ["azp"])
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
        }
    }

    @Test func configuredAudiencesAreRequired() async throws {
        let server = try await TestServer.federated { configuration in
            configuration.identityProviders[0].audiences = ["https://api.example.com"]
            configuration.identityProviders[0].acceptsAnyAudience = false
        }
        try await server.test(.router) { client in
            let without = try await Peer.clerkToken(claims: server.clerkClaims())
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: without).status == .unauthorized)
            let wrong = try await Peer.clerkToken(claims: server.clerkClaims(["aud": "https://other.example.com"]))
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: wrong).status == .unauthorized)
            let right = try await Peer.clerkToken(claims: server.clerkClaims(["aud": ["https://api.example.com", "x"]]))
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: right).status == .ok)
        }
    }

    @Test func aProviderConfiguredWithAPEMKeyNeedsNoJWKS() async throws {
        let pem = try await Peer.call("GET", "/test/public-key?kid=clerk-1")["pem"] as! String
        let server = try await TestServer.federated { configuration in
            configuration.identityProviders[0].jwksURL = nil
            configuration.identityProviders[0].publicKeyPEM = pem
        }
        try await server.test(.router) { client in
            let token = try await Peer.clerkToken(claims: server.clerkClaims())
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
            let forged = try await Peer.clerkToken(claims: server.clerkClaims(), signWith: "rogue")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: forged).status == .unauthorized)
        }
    }

    @Test func theSubjectClaimIsConfigurable() async throws {
        let server = try await TestServer.federated { configuration in
            configuration.identityProviders[0].subjectClaim = "external_id"
        }
        try await server.test(.router) { client in
            let token = try await Peer.clerkToken(claims: server.clerkClaims(["external_id": "ext-42"]))
            let profile = try await client.send(.get, "/api/v1/auth/me", bearer: token).decode(UserProfile.self)
            #expect(profile.providerSubject == "ext-42")
            let missing = try await Peer.clerkToken(claims: server.clerkClaims())
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: missing).status == .unauthorized)
        }
    }

    @Test(arguments: Transport.allCases)
    func tokenExchangeTradesAClerkTokenForALatchkeySession(transport: Transport) async throws {
        let server = try await TestServer.federated()
        try await server.test(transport) { client in
            let subject = "user_\(UUID().uuidString.prefix(12))"
            let clerk = try await Peer.clerkToken(claims: server.clerkClaims(subject: subject))
            let clerkUser = try await client.send(.get, "/api/v1/auth/me", bearer: clerk).decode(UserProfile.self).userID
            let exchanged = try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: clerk))
            #expect(exchanged.status == .ok, "\(exchanged.text)")
            let pair = try exchanged.decode(TokenPairResponse.self)
            #expect(pair.userID == clerkUser)
            let profile = try await client.send(.get, "/api/v1/auth/me", bearer: pair.accessToken).decode(UserProfile.self)
            #expect(profile.tokenKind == .session)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: pair.refreshToken)).status == .ok)
            // Latchkey's own tokens, and garbage, are not provider tokens.
            let own = try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: pair.accessToken))
            #expect(own.status == .unauthorized)
            let garbage = try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: "x.y.z"))
            #expect(garbage.status == .unauthorized)
            let empty = try await client.send(.post, "/api/v1/auth/token-exchange", json: #"{"subject_token":""}"#)
            #expect(empty.status == .badRequest)
        }
    }

    @Test func aProviderUserCanDeleteTheirAccount() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let token = try await Peer.clerkToken(claims: server.clerkClaims())
            let userID = try await client.send(.get, "/api/v1/auth/me", bearer: token).decode(UserProfile.self).userID
            let deleted = try await client.send(.delete, "/api/v1/users/me", bearer: token)
            #expect(deleted.status == .ok, "\(deleted.text)")
            #expect(try deleted.decode(AccountDeletionResponse.self).userID == userID)
            #expect(try await server.services.users.user(id: userID) == nil)
        }
    }

    static func replacingKid(in token: String, with kid: String) throws -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var base64 = parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        var header = try JSONSerialization.jsonObject(with: Data(base64Encoded: base64)!) as! [String: Any]
        header["kid"] = kid
        let encoded = try JSONSerialization.data(withJSONObject: header).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return ([encoded] + parts.dropFirst()).joined(separator: ".")
    }

    @Test func aTokenOfAnotherJWTTypeIsRefusedAndAConfiguredTypeIsRequired() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            for type in ["dpop+jwt", "logout+jwt", "id_token+jwt"] {
                let token = try await Peer.clerkToken(claims: server.clerkClaims(), type: type)
                expectUnauthorized(try await client.send(.get, "/api/v1/auth/me", bearer: token))
            }
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: try await Peer.clerkToken(claims: server.clerkClaims())).status == .ok)
        }
        let typed = try await TestServer.federated { $0.identityProviders[0].tokenType = "at+jwt" }
        try await typed.test(.router) { client in
            expectUnauthorized(try await client.send(.get, "/api/v1/auth/me", bearer: try await Peer.clerkToken(claims: typed.clerkClaims())))
            let token = try await Peer.clerkToken(claims: typed.clerkClaims(), type: "at+jwt")
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .ok)
        }
    }

    /// A JWKS URL that redirects is a provider failure (502): the server never follows it to another address.
    @Test func aRedirectingJWKSIsNotFollowed() async throws {
        let tag = UUID().uuidString
        let base = try Peer.base()
        let server = try await TestServer.federated { configuration in
            configuration.identityProviders[0].jwksURL = "\(base)/moved/.well-known/jwks.json?tag=\(tag)"
        }
        try await server.test(.live) { client in
            let token = try await Peer.clerkToken(claims: server.clerkClaims())
            let answer = try await client.send(.get, "/api/v1/auth/me", bearer: token)
            #expect(answer.status == .badGateway)
            #expect(answer.envelope?.error.code == .upstreamError)
            #expect(try await Peer.fetches(tag: tag) == 0)  // the keys the redirect named were never fetched
        }
    }

    @Test func anUnreachableJWKSIsNotFetchedAgainForEveryToken() async throws {
        let tag = UUID().uuidString
        let base = try Peer.base()
        let server = try await TestServer.federated { configuration in
            var down = IdentityProviderConfiguration(name: "down", issuer: "\(base)/down", jwksURL: "\(base)/down/.well-known/jwks.json?tag=\(tag)")
            down.acceptsAnyAudience = true
            down.authorizedParties = [Peer.clerkParty]
            configuration.identityProviders.append(down)
        }
        try await server.test(.router) { client in
            let token = try await Peer.clerkToken(claims: server.clerkClaims(["iss": "\(base)/down"]))
            for _ in 0..<5 {
                #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .badGateway)
            }
            // One fetch; the others were answered 502 at once, backing off (1 s, doubling, on the server's clock).
            #expect(try await Peer.fetches(tag: tag) == 1)
            server.clock.advance(by: 1.5)
            #expect(try await client.send(.get, "/api/v1/auth/me", bearer: token).status == .badGateway)
            #expect(try await Peer.fetches(tag: tag) == 2)
        }
    }
}
