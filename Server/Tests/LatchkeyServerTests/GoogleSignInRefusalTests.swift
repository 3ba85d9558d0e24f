import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Every refusal of `POST /api/v1/auth/google`: each bad token is 401 `invalid_token` and creates nothing; each malformed
/// body is 400 `invalid_request` and writes nothing; the nonce is compared raw; the leeway and hosted domains.
@Suite(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct GoogleSignInRefusalTests {
    typealias Peer = IdentityProviderPeer

    static func expectRefused(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unauthorized, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .invalidToken, sourceLocation: sourceLocation)
    }

    enum BadToken: String, CaseIterable, CustomStringConvertible {
        case wrongIssuer, lookalikeIssuer, wrongAudience, azpNotListed, expiredBeyondLeeway, issuedInTheFutureBeyondLeeway, notBeforeBeyondLeeway,
            forgedSignature, unknownKid, missingKid, algNone, hs256WithThePublicKey, es256, missingSubject, missingExp
        var description: String { self.rawValue }
    }

    @Test(arguments: BadToken.allCases)
    func aBadIDTokenIs401AndCreatesNoUser(bad: BadToken) async throws {
        let server = try await TestServer.google()
        let subject = "bad.\(UUID().uuidString)"
        try await server.test(.router) { client in
            let now = Int(server.clock.now().timeIntervalSince1970)
            var claims = server.googleClaims(subject: subject)
            var omit: [String] = []
            var (signWith, kid, alg): (String, String??, String) = ("google-1", .none, "RS256")
            switch bad {
            case .wrongIssuer: claims["iss"] = "https://appleid.apple.com"
            case .lookalikeIssuer: claims["iss"] = "https://accounts.google.com.evil.example"
            case .wrongAudience: (claims["aud"], claims["azp"]) = ("someone-else.apps.googleusercontent.com", Peer.googleClientID)
            case .azpNotListed: claims["azp"] = "someone-else.apps.googleusercontent.com"
            case .expiredBeyondLeeway: (claims["iat"], claims["exp"]) = (now - 3700, now - 61)  // leeway is 60 s
            case .issuedInTheFutureBeyondLeeway: (claims["iat"], claims["exp"]) = (now + 61, now + 3600)
            case .notBeforeBeyondLeeway: claims["nbf"] = now + 61
            case .forgedSignature: (signWith, kid) = ("rogue", .some("google-1"))
            case .unknownKid: (signWith, kid) = ("rogue", .some("google-9"))
            case .missingKid: kid = .some(nil)
            case .algNone: alg = "none"
            case .hs256WithThePublicKey: alg = "HS256"
            case .es256: alg = "ES256"
            case .missingSubject: omit = ["sub"]
            case .missingExp: omit = ["exp"]
            }
            let token = try await Peer.googleToken(claims: claims, omit: omit, signWith: signWith, kid: kid, alg: alg)
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: token))
            // Nothing was created: the same subject, correctly signed, is a new user now.
            let good = try await Peer.googleToken(claims: server.googleClaims(subject: subject))
            #expect(try await GoogleSignInTests.signIn(client, token: good).status == .created)
        }
    }

    @Test func expiryAndIssueTimesWithinTheLeewayAreAccepted() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let now = Int(server.clock.now().timeIntervalSince1970)
            for times: [String: Any] in [["iat": now - 3659, "exp": now - 59], ["iat": now + 59, "exp": now + 3600], ["nbf": now + 59]] {
                let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString, times))
                let answer = try await GoogleSignInTests.signIn(client, token: token)
                #expect(answer.status == .created, "\(times): \(answer.text)")
            }
        }
    }

    @Test func aSmallerLeewaySettingRefusesWhatTheDefaultAccepts() async throws {
        let server = try await TestServer.google { $0.google.leeway = 5 }
        try await server.test(.router) { client in
            let now = Int(server.clock.now().timeIntervalSince1970)
            let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString, ["exp": now - 30]))
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: token))
        }
    }

    /// Google puts the nonce in the token as the app gave it: compared raw, byte for byte.
    @Test func theNonceIsComparedRawByteForByte() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let nonce = "n-\(UUID().uuidString)-é"
            let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString, nonce: nonce))
            #expect(try await GoogleSignInTests.signIn(client, token: token, nonce: nonce).status == .created)
            // The SHA-256 of the nonce (what Apple's tokens carry, and what GoTrue wrongly expects from Google) is refused.
            let hashed = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString, nonce: Peer.sha256Hex(nonce)))
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: hashed, nonce: nonce))
            // So is a nonce that differs in case only, or in its Unicode form (é composed vs e + combining accent).
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: token, nonce: nonce.uppercased()))
            let decomposed = nonce.decomposedStringWithCanonicalMapping
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: token, nonce: decomposed))
        }
    }

    @Test func aNonceMismatchOrANonceMissingOnEitherSideIsRefused() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let withNonce = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString, nonce: "the-nonce"))
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: withNonce, nonce: "another-nonce"))
            // The token carries a nonce the request does not send.
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: withNonce))
            // The request sends a nonce the token does not carry.
            let without = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString))
            Self.expectRefused(try await GoogleSignInTests.signIn(client, token: without, nonce: "the-nonce"))
            // Neither has one: accepted.
            #expect(try await GoogleSignInTests.signIn(client, token: without).status == .created)
        }
    }

    @Test func withHostedDomainsATokensHDMustBeOneOfThem() async throws {
        let server = try await TestServer.google { $0.google.hostedDomains = ["example.com", "example.org"] }
        try await server.test(.router) { client in
            for domain in ["example.org", "Example.COM"] {
                let answer = try await GoogleSignInTests.signIn(client, server: server, subject: UUID().uuidString, ["hd": domain])
                #expect(answer.status == .created, "\(domain): \(answer.text)")
            }
            for domain in ["evil.example", "mail.example.com", ""] {
                Self.expectRefused(try await GoogleSignInTests.signIn(client, server: server, subject: UUID().uuidString, ["hd": domain]))
            }
            // A consumer account's token has no hd.
            Self.expectRefused(try await GoogleSignInTests.signIn(client, server: server, subject: UUID().uuidString))
        }
    }

    @Test func withoutHostedDomainsEveryAccountSignsIn() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            #expect(try await GoogleSignInTests.signIn(client, server: server, subject: UUID().uuidString).status == .created)
            let workspace = try await GoogleSignInTests.signIn(client, server: server, subject: UUID().uuidString, ["hd": "example.net"])
            #expect(workspace.status == .created)
        }
    }

    static let malformedBodies = [
        "", "not json", "[]", "{}", #"{"id_token":""}"#, #"{"id_token":5}"#, #"{"id_token":null}"#, #"{"nonce":"n"}"#,
        #"{"id_token":"x.y.z","nonce":""}"#, #"{"id_token":"x.y.z","nonce":7}"#, #"{"id_token":["x"]}"#,
    ]

    @Test(arguments: Self.malformedBodies)
    func aMalformedBodyIs400AndWritesNothing(body: String) async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let answer = try await client.send(.post, "/api/v1/auth/google", json: body)
            #expect(answer.status == .badRequest, "\(answer.text)")
            #expect(answer.envelope?.error.code == .invalidRequest)
            #expect(try await server.services.store.users(limit: 10, offset: 0).isEmpty)
        }
    }

    @Test func aTokenThatIsNoJWTIs401() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            for token in ["x.y.z", "not-a-jwt", "a.b", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"] {
                Self.expectRefused(try await GoogleSignInTests.signIn(client, token: token))
            }
            #expect(try await server.services.store.users(limit: 10, offset: 0).isEmpty)
        }
    }
}
