import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK against a live server whose Apple and Clerk are `Tests/interop/idp_peer.py` (started by `scripts/test`):
/// seed 001 (Photolala: Apple → our own user UUID), linking an anonymous device user, and seed 004 (SabaiPics:
/// a real Clerk-shaped session token as the Bearer).
@Suite(
    .enabled(
        if: !(ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"] ?? "").isEmpty,
        "LATCHKEY_TEST_IDP_URL is not set, so there is no Apple/Clerk peer (scripts/test starts Tests/interop/idp_peer.py)"))
struct FederationEndToEndTests {
    static var peer: String { ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"] ?? "" }

    static func mint(_ path: String, claims: [String: Any]) async throws -> String {
        var request = URLRequest(url: URL(string: Self.peer + path)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["claims": claims])
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
}
