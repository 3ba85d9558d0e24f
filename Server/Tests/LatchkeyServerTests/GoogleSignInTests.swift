import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/google` against the local Google-like issuer of `Tests/interop/idp_peer.py` (its own JWKS, tokens
/// with Google's issuer): identity mapping, linking, the email rules, second factors, disabled users and the shared
/// sign-in limit. The refusals are in ``GoogleSignInRefusalTests``.
@Suite(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct GoogleSignInTests {
    typealias Peer = IdentityProviderPeer

    static func signIn(_ client: some TestClientProtocol, token: String, nonce: String? = nil, bearer: String? = nil) async throws -> TestResponse {
        try await client.send(.post, "/api/v1/auth/google", bearer: bearer, body: GoogleSignInRequest(idToken: token, nonce: nonce))
    }

    /// Signs `subject` in with a fresh token carrying a fresh nonce.
    static func signIn(
        _ client: some TestClientProtocol, server: TestServer, subject: String, _ extra: [String: Any] = [:], bearer: String? = nil
    ) async throws -> TestResponse {
        let nonce = UUID().uuidString
        let token = try await Peer.googleToken(claims: server.googleClaims(subject: subject, nonce: nonce, extra))
        return try await Self.signIn(client, token: token, nonce: nonce, bearer: bearer)
    }

    static func profile(_ client: some TestClientProtocol, _ response: TestResponse) async throws -> UserProfile {
        let pair = try response.decode(TokenPairResponse.self)
        return try await client.send(.get, "/api/v1/users/me", bearer: pair.accessToken).decode(UserProfile.self)
    }

    @Test(arguments: Transport.allCases)
    func aNewGoogleSubjectIsAFederatedUser201AndReturnsAsTheSameUser200(transport: Transport) async throws {
        let server = try await TestServer.google()
        let subject = "1\(Int.random(in: 10_000_000...99_999_999))"
        try await server.test(transport) { client in
            let first = try await Self.signIn(client, server: server, subject: subject)
            #expect(first.status == .created, "\(first.text)")
            let pair = try first.decode(TokenPairResponse.self)
            #expect(UUID(uuidString: pair.userID) != nil)
            #expect(try claims(of: pair.accessToken).amr == [.google])
            let profile = try await Self.profile(client, first)
            #expect(profile.kind == .federated)
            #expect(profile.identities.map(\.provider) == ["google"])
            #expect(profile.identities.map(\.subject) == [subject])
            #expect(profile.identities.map(\.email) == ["person@example.com"])  // email_verified true: shown on the identity

            let again = try await Self.signIn(client, server: server, subject: subject)
            #expect(again.status == .ok, "\(again.text)")
            #expect(try again.decode(TokenPairResponse.self).userID == pair.userID)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: pair.refreshToken)).status == .ok)
        }
    }

    @Test func bothOfGooglesIssuersAndEveryClientIDAreAccepted() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            for extra: [String: Any] in [
                ["iss": "accounts.google.com"], ["aud": Peer.googleWebClientID, "azp": Peer.googleClientID], ["aud": Peer.googleWebClientID],
            ] {
                let answer = try await Self.signIn(client, server: server, subject: UUID().uuidString, extra)
                #expect(answer.status == .created, "\(extra): \(answer.text)")
            }
            // A token without azp (it is optional) passes on its audience.
            let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString), omit: ["azp"])
            #expect(try await Self.signIn(client, token: token).status == .created)
        }
    }

    @Test func aSessionLinksGoogleAndKeepsItsUserID() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let subject = "link.\(UUID().uuidString)"
            let linked = try await Self.signIn(client, server: server, subject: subject, bearer: device.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            #expect(try linked.decode(TokenPairResponse.self).userID == device.userID)
            let profile = try await Self.profile(client, linked)
            #expect(profile.kind == .device)
            #expect(profile.identities.map(\.subject) == [subject])
            // Later, without a Bearer (a reinstall), the Google account signs in as that user.
            let later = try await Self.signIn(client, server: server, subject: subject)
            #expect(later.status == .ok)
            #expect(try later.decode(TokenPairResponse.self).userID == device.userID)
        }
    }

    @Test func linkingASubjectAnotherUserHoldsIs409AndMergesNothing() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let subject = "taken.\(UUID().uuidString)"
            let owner = try await Self.signIn(client, server: server, subject: subject).decode(TokenPairResponse.self)
            let device = try await client.registerDevice()
            let refused = try await Self.signIn(client, server: server, subject: subject, bearer: device.accessToken)
            #expect(refused.status == .conflict, "\(refused.text)")
            #expect(refused.envelope?.error.code == .identityAlreadyLinked)
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).decode(UserProfile.self)
            #expect(profile.identities.isEmpty)
            #expect(try await Self.signIn(client, server: server, subject: subject).decode(TokenPairResponse.self).userID == owner.userID)
        }
    }

    @Test func aGuestCannotLinkAndABearerThatDoesNotVerifyIs401() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [.init("X-Device-ID")!: UUID().uuidString])
            let guestToken = try guest.decode(GuestSessionResponse.self).accessToken
            #expect(try await Self.signIn(client, server: server, subject: UUID().uuidString, bearer: guestToken).status == .forbidden)
            let bad = try await Self.signIn(client, server: server, subject: UUID().uuidString, bearer: "not-a-token")
            #expect(bad.status == .unauthorized)
        }
    }

    @Test func anEmailThatIsNotVerifiedIsNotKept() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            for verified: Any in [false, "false"] {
                let answer = try await Self.signIn(
                    client, server: server, subject: UUID().uuidString, ["email": "unverified@example.com", "email_verified": verified])
                #expect(answer.status == .created)
                #expect(try await Self.profile(client, answer).identities.map(\.email) == [nil])
            }
            let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString), omit: ["email_verified"])
            let answer = try await Self.signIn(client, token: token)
            #expect(try await Self.profile(client, answer).identities.map(\.email) == [nil])
        }
    }

    /// The email address is never a key: a Google account with the address of an Apple user is a user of its own.
    @Test func theSameVerifiedEmailAsAnAppleUserDoesNotMerge() async throws {
        let server = try await TestServer.google()
        try await server.test(.router) { client in
            let email = "shared.\(UUID().uuidString.prefix(8))@example.com"
            let nonce = UUID().uuidString
            let appleToken = try await Peer.appleToken(
                claims: server.appleClaims(rawNonce: nonce, subject: UUID().uuidString, ["email": email, "email_verified": true]))
            let apple = try await client.send(.post, "/api/v1/auth/apple", body: AppleSignInRequest(identityToken: appleToken, rawNonce: nonce))
            #expect(apple.status == .created, "\(apple.text)")
            let google = try await Self.signIn(client, server: server, subject: UUID().uuidString, ["email": email])
            #expect(google.status == .created, "\(google.text)")
            #expect(try google.decode(TokenPairResponse.self).userID != apple.decode(TokenPairResponse.self).userID)
            #expect(try await Self.profile(client, google).identities.map(\.provider) == ["google"])
        }
    }

    @Test func aDisabledUserIs403UserDisabled() async throws {
        let server = try await TestServer.google { BackendCaller.configure(&$0) }
        try await server.test(.router) { client in
            let subject = UUID().uuidString
            let pair = try await Self.signIn(client, server: server, subject: subject).decode(TokenPairResponse.self)
            let disable = try await client.send(
                .post, "\(BackendCaller.path)/\(pair.userID)/disable", bearer: BackendCaller.key)
            #expect(disable.status == .ok, "\(disable.text)")
            let refused = try await Self.signIn(client, server: server, subject: subject)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .userDisabled)
        }
    }

    @Test func aUserWithASecondFactorGetsMFARequired() async throws {
        let server = try await TestServer.google()
        try await server.test(.live) { client in
            let subject = "mfa.\(UUID().uuidString)"
            let session = try await Self.signIn(client, server: server, subject: subject).decode(TokenPairResponse.self)
            _ = try await client.confirmedFactor(bearer: session.accessToken, at: server.clock.now())
            let held = try await Self.signIn(client, server: server, subject: subject)
            #expect(held.status == .forbidden, "\(held.text)")
            #expect(try held.decode(MFARequiredResponse.self).error.code == .mfaRequired)
        }
    }

    @Test func withoutClientIDsTheRouteIs404() async throws {
        let server = try await TestServer.google { $0.google.clientIDs = [] }
        try await server.test(.router) { client in
            let answer = try await Self.signIn(client, server: server, subject: UUID().uuidString)
            #expect(answer.status == .notFound, "\(answer.text)")
        }
    }

    /// Apple, Google and token exchange count against one `limits.sign-in`.
    @Test func googleCountsInTheSignInLimitWithApple() async throws {
        let server = try await TestServer.google { configuration in
            configuration.limits.signIn.limit = 2
            configuration.limits.signIn.window = 300
        }
        try await server.test(.router) { client in
            let apple = try await client.send(.post, "/api/v1/auth/apple", json: #"{"identity_token":"x.y.z","raw_nonce":"n"}"#)
            #expect(apple.status == .unauthorized)
            #expect(try await Self.signIn(client, server: server, subject: UUID().uuidString).status == .created)
            let limited = try await Self.signIn(client, server: server, subject: UUID().uuidString)
            #expect(limited.status == .tooManyRequests, "\(limited.text)")
            #expect(limited.envelope?.error.code == .rateLimited)
            let appleLimited = try await client.send(.post, "/api/v1/auth/apple", json: #"{"identity_token":"x.y.z","raw_nonce":"n"}"#)
            #expect(appleLimited.status == .tooManyRequests)
        }
    }

    /// Google's keys are fetched once and then verify every token without a network call.
    @Test func googlesKeysAreFetchedOnceForManySignIns() async throws {
        let tag = UUID().uuidString
        let server = try await TestServer.google(tag: tag)
        try await server.test(.router) { client in
            for signer in ["google-1", "google-2", "google-1"] {
                let token = try await Peer.googleToken(claims: server.googleClaims(subject: UUID().uuidString), signWith: signer)
                #expect(try await Self.signIn(client, token: token).status == .created)
            }
            #expect(try await Peer.fetches(tag: "\(tag)-google") == 1)
        }
    }
}

extension IdentityProviderPeer {
    static let googleClientID = "1234567890-ios.apps.googleusercontent.com"
    static let googleWebClientID = "1234567890-web.apps.googleusercontent.com"

    /// A Google ID token from the peer's Google-like issuer; `claims` override its defaults.
    static func googleToken(
        claims: [String: Any], omit: [String] = [], signWith: String = "google-1", kid: String?? = .none, alg: String = "RS256"
    ) async throws -> String {
        var body: [String: Any] = ["claims": claims, "omit": omit, "sign_with": signWith, "alg": alg]
        if case .some(let kid) = kid { body["kid"] = kid ?? NSNull() }
        return try await self.call("POST", "/test/mint/google", json: body)["token"] as! String
    }
}

extension TestServer {
    /// ``federated(tag:clock:configure:)`` with Sign in with Google too: the iOS and web client IDs, keys from the peer.
    static func google(
        tag: String = UUID().uuidString, configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let base = try IdentityProviderPeer.base()
        return try await Self.federated(tag: tag) { configuration in
            configuration.google.clientIDs = [IdentityProviderPeer.googleClientID, IdentityProviderPeer.googleWebClientID]
            configuration.google.jwksURL = "\(base)/google/oauth2/v3/certs?tag=\(tag)-google"
            configure(&configuration)
        }
    }

    /// Google claims for this server's clock: issued now, valid an hour; with `nonce` when given.
    func googleClaims(subject: String, nonce: String? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        let now = Int(self.clock.now().timeIntervalSince1970)
        var claims: [String: Any] = ["iat": now, "exp": now + 3600, "sub": subject]
        if let nonce { claims["nonce"] = nonce }
        return claims.merging(extra) { $1 }
    }
}
