import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK against a live server whose Apple, Google and Clerk are `Tests/interop/idp_peer.py` (started by `scripts/test`):
/// seed 001 (Photolala: Apple → our own user UUID), linking an anonymous device user, seed 004 (SabaiPics: a real
/// Clerk-shaped session token as the Bearer), and Sign in with Google against the peer's hidden Google-like issuer
/// (Google's own `iss`; the server only knows where its keys are).
@Suite(
    .enabled(
        if: !(ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"] ?? "").isEmpty,
        "LATCHKEY_TEST_IDP_URL is not set, so there is no Apple/Clerk peer (scripts/test starts Tests/interop/idp_peer.py)"))
struct FederationEndToEndTests {
    static var peer: String { ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"] ?? "" }

    static func mint(_ path: String, claims: [String: Any], _ options: [String: Any] = [:]) async throws -> String {
        var request = URLRequest(url: URL(string: Self.peer + path)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: options.merging(["claims": claims]) { $1 })
        let (data, _) = try await URLSession.shared.data(for: request)
        return try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["token"] as? String)
    }

    static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.apple.clientIDs = ["com.example.app"]
        configuration.apple.jwksURL = "\(Self.peer)/auth/keys"
        var clerk = IdentityProviderConfiguration(name: "clerk", issuer: "\(Self.peer)/clerk", jwksURL: "\(Self.peer)/clerk/.well-known/jwks.json")
        clerk.acceptsAnyAudience = true  // Clerk's session tokens carry no aud: their azp names the app
        clerk.authorizedParties = ["https://app.example.com"]
        configuration.identityProviders = [clerk]
        configuration.google.clientIDs = [Self.googleClientID]
        configuration.google.jwksURL = "\(Self.peer)/google/oauth2/v3/certs"
    }

    static let googleClientID = "1234567890-ios.apps.googleusercontent.com"

    /// A Google ID token for `subject` carrying `nonce` raw (as Google does), valid on `server`'s clock; `extra` claims and
    /// minting `options` (`sign_with`, `kid`, `alg`, `omit`) as the peer takes them.
    static func googleToken(
        subject: String, nonce: String?, server: LiveServer, _ extra: [String: Any] = [:], _ options: [String: Any] = [:]
    ) async throws -> String {
        let now = Int(server.clock.now().timeIntervalSince1970)
        var claims: [String: Any] = ["sub": subject, "iat": now, "exp": now + 3600]
        if let nonce { claims["nonce"] = nonce }
        return try await Self.mint("/test/mint/google", claims: claims.merging(extra) { $1 }, options)
    }

    /// An Apple identity token for `subject` carrying `nonce`'s hash, valid on `server`'s clock.
    static func appleToken(subject: String, nonce: AppleNonce, server: LiveServer) async throws -> String {
        let now = Int(server.clock.now().timeIntervalSince1970)
        return try await Self.mint("/test/mint/apple", claims: ["sub": subject, "nonce": nonce.sha256, "iat": now, "exp": now + 600])
    }

    @Test func photolalaAppleSignInGivesOurOwnUserIDAndAReinstallGetsTheSameOne() async throws {
        try await LiveServer.run(configure: Self.configure) { server in
            let subject = "001234.\(UUID().uuidString).0001"
            let app = AppInstall(server: server)
            let nonce = AppleNonce.random()
            let first = try await app.launch().signInWithApple(
                identityToken: try await Self.appleToken(subject: subject, nonce: nonce, server: server), rawNonce: nonce.raw)
            #expect(UUID(uuidString: first.userID) != nil)
            #expect(first.userID != subject)

            let reinstalled = AppInstall(server: server)
            let again = AppleNonce.random()
            let second = try await reinstalled.launch().signInWithApple(
                identityToken: try await Self.appleToken(subject: subject, nonce: again, server: server), rawNonce: again.raw)
            #expect(second.userID == first.userID)
            // A relaunch restores the Apple session like any other.
            #expect(await reinstalled.launch().bootstrap().isSignedIn)
        }
    }

    @Test func anAnonymousDeviceUserLinksAppleAndKeepsItsID() async throws {
        try await LiveServer.run(configure: Self.configure) { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            let device = try await session.registerDevice()
            let nonce = AppleNonce.random()
            let linked = try await session.signInWithApple(
                identityToken: try await Self.appleToken(subject: "link.\(UUID().uuidString)", nonce: nonce, server: server),
                rawNonce: nonce.raw)
            #expect(linked.userID == device.userID)
            let profile = try await session.currentUser()
            #expect(profile.identities.map(\.provider) == ["apple"])
            // The same Apple ID from another install's device session: 409, surfaced as its own error.
            let other = AppInstall(server: server).launch()
            _ = try await other.registerDevice()
            let replayNonce = AppleNonce.random()
            let token = try await Self.appleToken(subject: profile.identities[0].subject, nonce: replayNonce, server: server)
            await expectRefusal(.identityAlreadyLinked) {
                try await other.signInWithApple(identityToken: token, rawNonce: replayNonce.raw)
            }
            #expect(await other.state.isSignedIn)  // still its own device user
        }
    }

    @Test func sabaiPicsSendsARealClerkTokenAsTheBearer() async throws {
        try await LiveServer.run(configure: Self.configure) { server in
            let now = Int(server.clock.now().timeIntervalSince1970)
            let clerkUser = "user_\(UUID().uuidString.prefix(10))"
            let clerkToken = try await Self.mint("/test/mint/clerk", claims: ["sub": clerkUser, "iat": now, "nbf": now - 5, "exp": now + 60])
            let app = AppInstall(server: server)
            let session = app.launch { $0.tokenProvider = { _ in clerkToken } }
            let profile = try await session.currentUser()
            #expect(profile.providerSubject == clerkUser)
            #expect(profile.provider == "clerk")
            #expect(UUID(uuidString: profile.userID) != nil)
            _ = try await session.send(.get("/api/v1/assets/echo", auth: .bearer))
            #expect(server.seen.last?.authorization == "Bearer \(clerkToken)")
        }
    }

    /// Sign in with Google end to end: a first sign-in, the return of the same account on another install, linking a
    /// device user, the conflict of linking an account another user holds, and the refusals, each leaving the session in use.
    @Test func googleSignInReturnLinkConflictAndRefusals() async throws {
        try await LiveServer.run(configure: Self.configure) { server in
            let subject = "1\(Int.random(in: 100_000_000...999_999_999))"
            let nonce = UUID().uuidString
            let first = try await AppInstall(server: server).launch().signInWithGoogle(
                idToken: try await Self.googleToken(subject: subject, nonce: nonce, server: server), nonce: nonce)
            #expect(UUID(uuidString: first.userID) != nil)
            let returning = AppInstall(server: server).launch()
            let again = try await returning.signInWithGoogle(idToken: try await Self.googleToken(subject: subject, nonce: nil, server: server))
            #expect(again.userID == first.userID)
            let profile = try await returning.currentUser()
            #expect(profile.identities.map(\.provider) == ["google"])
            #expect(profile.identities.map(\.email) == ["person@example.com"])

            let device = AppInstall(server: server).launch()
            let deviceUser = try await device.registerDevice()
            let linkNonce = UUID().uuidString
            let linked = try await device.signInWithGoogle(
                idToken: try await Self.googleToken(subject: "link.\(UUID().uuidString)", nonce: linkNonce, server: server), nonce: linkNonce)
            #expect(linked.userID == deviceUser.userID)

            let other = AppInstall(server: server).launch()
            _ = try await other.registerDevice()
            await expectRefusal(.identityAlreadyLinked) {
                try await other.signInWithGoogle(idToken: try await Self.googleToken(subject: subject, nonce: nil, server: server))
            }
            #expect(await other.state.isSignedIn)

            let now = Int(server.clock.now().timeIntervalSince1970)
            let hashed = AppleNonce.random()
            let refused: [(String, String?, [String: Any], [String: Any])] = [
                ("another app's client ID", nil, ["aud": "someone-else.apps.googleusercontent.com"], [:]),
                ("azp of another app", nil, ["azp": "someone-else.apps.googleusercontent.com"], [:]),
                ("another issuer", nil, ["iss": "https://accounts.google.com.evil.example"], [:]),
                ("expired beyond the leeway", nil, ["iat": now - 7200, "exp": now - 61], [:]),
                ("a forged signature", nil, [:], ["sign_with": "rogue", "kid": "google-1"]),
                ("a key Google does not publish", nil, [:], ["sign_with": "rogue", "kid": "google-9"]),
                ("alg none", nil, [:], ["alg": "none"]),
                ("the nonce hashed, as Apple's", hashed.raw, ["nonce": hashed.sha256], [:]),
                ("a nonce the request does not send", nil, ["nonce": "raw-nonce"], [:]),
                ("no nonce for the one sent", "raw-nonce", [:], [:]),
            ]
            for (name, sent, extra, options) in refused {
                let token = try await Self.googleToken(subject: "refused.\(UUID().uuidString)", nonce: nil, server: server, extra, options)
                await expectRefusal(.signInRejected) { try await other.signInWithGoogle(idToken: token, nonce: sent) }
                #expect(await other.state.isSignedIn, "\(name)")
            }
        }
    }
}
