import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// `signInWithGoogle(idToken:nonce:)` against a stubbed transport: the body, linking, and refusals.
@Suite struct GoogleSignInTests {
    static let path = "/api/v1/auth/google"
    static let federatedUser = "3f1d2c4b-6a5e-4f70-9b8c-7d6e5f4a3b21"

    @Test func theBodyIsTheTokenAndTheNonceAsGivenByteForByte() async throws {
        let fixture = Fixture { _ in .json(201, Samples.pair(7, userID: Self.federatedUser)) }
        let session = fixture.session()
        let nonce = "Zq3+x=é-N0nce_~."
        let signedIn = try await session.signInWithGoogle(idToken: "google-id-token", nonce: nonce)
        try await session.signInWithGoogle(idToken: "google-id-token-2")

        #expect(signedIn.userID == Self.federatedUser)
        let sent = fixture.transport.requests(to: Self.path)
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.method == "POST" && $0.header("Content-Type") == "application/json" })
        // The nonce goes as given: its own UTF-8 bytes, not hashed, not escaped, not normalised.
        let body = try #require(sent[0].body)
        #expect(body.count == Data(#"{"id_token":"google-id-token","nonce":"Zq3+x=é-N0nce_~."}"#.utf8).count)
        #expect(body.range(of: Data(#""nonce":"Zq3+x=é-N0nce_~.""#.utf8)) != nil)
        #expect(body.range(of: Data(#""id_token":"google-id-token""#.utf8)) != nil)
        // No nonce: the key is left out, not sent as null or empty.
        #expect(sent[1].body == Data(#"{"id_token":"google-id-token-2"}"#.utf8))
        let stored = try #require(try fixture.store.load())
        #expect(stored.session?.userID == Self.federatedUser)
        #expect(stored.session?.kind == .session)
        #expect(await session.state.isSignedIn)
    }

    @Test func withoutASessionNoAuthorizationIsSent() async throws {
        let fixture = Fixture { _ in .json(201, Samples.pair(7, userID: Self.federatedUser)) }
        try fixture.storeDevice(secret: "secret-1")
        try await fixture.session().signInWithGoogle(idToken: "google-id-token", nonce: "n")
        #expect(fixture.transport.requests.map(\.url.path) == [Self.path])
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
    }

    @Test func withADeviceSessionItsBearerIsSentToLinkAndTheUserIDStays() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeDeviceSession()
        let userID = deviceID.uuidString.lowercased()
        let transport = StubTransport { _ in .json(200, Samples.pair(2, userID: userID)) }
        let signedIn = try await fixture.session(transport: transport).signInWithGoogle(idToken: "google-id-token", nonce: "n")
        #expect(transport.requests.map(\.url.path) == [Self.path])
        #expect(transport.requests.first?.bearer == "access-1")
        #expect(signedIn.userID == userID)
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
    }

    @Test func notLinkingSendsNoBearer() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2, userID: Self.federatedUser)) }
        try fixture.storeDeviceSession()
        try await fixture.session().signInWithGoogle(idToken: "google-id-token", nonce: nil, linkingCurrentUser: false)
        #expect(fixture.transport.requests.first?.header("Authorization") == nil)
        #expect(try fixture.store.load()?.session?.userID == Self.federatedUser)
    }

    @Test func aGoogleAccountOfAnotherUserIsIdentityAlreadyLinkedAndTheSessionIsUntouched() async throws {
        let fixture = Fixture()
        try fixture.storeDeviceSession()
        let transport = StubTransport { _ in .error(409, .identityAlreadyLinked, "This Google account belongs to another user.") }
        let stored = try fixture.store.load()
        await #expect(throws: LatchkeyError.refusal(409, .identityAlreadyLinked, "This Google account belongs to another user.")) {
            try await fixture.session(transport: transport).signInWithGoogle(idToken: "google-id-token", nonce: "nonce-7f3a")
        }
        #expect(try fixture.store.load() == stored)
    }

    @Test func aRefusedIDTokenIsARejectedSignInAndNeverQuotesTheTokenOrNonce() async throws {
        let fixture = Fixture { _ in .error(401, .invalidToken, "The token google-id-token with nonce secret-nonce was refused.") }
        await #expect(throws: LatchkeyError.refusal(401, .signInRejected, "The token <redacted> with nonce <redacted> was refused.")) {
            try await fixture.session().signInWithGoogle(idToken: "google-id-token", nonce: "secret-nonce")
        }
        #expect(try fixture.store.load()?.session == nil)
    }
}
