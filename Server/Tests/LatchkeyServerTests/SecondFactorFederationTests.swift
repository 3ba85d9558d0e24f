import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Sign in with Apple and provider token exchange of a user with a factor are held back as a password login is, and
/// finish as `["apple", "otp"]` and `["fed", "otp"]`; unlinking an identity needs a step-up. Against the local
/// Apple/Clerk peer.
@Suite(.timeLimit(.minutes(3)), .enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct SecondFactorFederationTests {
    typealias Peer = IdentityProviderPeer

    static func appleSignIn(
        _ client: some TestClientProtocol, server: TestServer, subject: String, bearer: String? = nil
    ) async throws -> TestResponse {
        let nonce = UUID().uuidString
        let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject))
        return try await client.send(.post, "/api/v1/auth/apple", bearer: bearer, body: AppleSignInRequest(identityToken: token, rawNonce: nonce))
    }

    /// The 403 `mfa_required` of a held-back sign-in naming `factorID`: its `mfa_token`.
    static func expectHeld(_ response: TestResponse, factorID: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        #expect(response.status == .forbidden, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.jsonObject?["access_token"] == nil, sourceLocation: sourceLocation)
        let challenge = try response.decode(MFARequiredResponse.self)
        #expect(challenge.error.code == .mfaRequired, sourceLocation: sourceLocation)
        #expect(challenge.factors == [MFARequiredResponse.Factor(id: factorID, type: .totp)], sourceLocation: sourceLocation)
        return challenge.mfaToken
    }

    @Test func signInWithAppleIsHeldBackAndFinishesAsAppleAndOTP() async throws {
        let server = try await TestServer.federated()
        try await server.test(.live) { client in
            let subject = "mfa.\(UUID().uuidString)"
            let first = try await Self.appleSignIn(client, server: server, subject: subject)
            #expect(first.status == .created, "\(first.text)")
            let session = try first.decode(TokenPairResponse.self)
            let firstClaims = try claims(of: session.accessToken)
            #expect(firstClaims.aal == .aal1 && firstClaims.amr == [.apple], "\(firstClaims)")
            let factor = try await client.confirmedFactor(bearer: session.accessToken, at: server.clock.now())
            server.clock.advance(by: TOTPGenerator.period)

            let mfaToken = try Self.expectHeld(try await Self.appleSignIn(client, server: server, subject: subject), factorID: factor.factorID)
            let verified = try await client.verifyMFA(mfaToken, code: factor.totp.code(at: server.clock.now()))
            #expect(verified.status == .ok, "\(verified.text)")
            let pair = try verified.decode(TokenPairResponse.self)
            #expect(pair.userID == session.userID)
            let signedIn = try claims(of: pair.accessToken)
            #expect(signedIn.aal == .aal2 && signedIn.amr == [.apple, .otp], "\(signedIn)")
        }
    }

    @Test func tokenExchangeIsHeldBackAndFinishesAsFederatedAndOTP() async throws {
        let server = try await TestServer.federated()
        try await server.test(.live) { client in
            let subject = "user_\(UUID().uuidString.prefix(12))"
            func exchange() async throws -> TestResponse {
                let clerk = try await Peer.clerkToken(claims: server.clerkClaims(subject: subject))
                return try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: clerk))
            }
            let first = try await exchange()
            #expect(first.status == .ok, "\(first.text)")
            let session = try first.decode(TokenPairResponse.self)
            let firstClaims = try claims(of: session.accessToken)
            #expect(firstClaims.aal == .aal1 && firstClaims.amr == [.federated], "\(firstClaims)")
            let factor = try await client.confirmedFactor(bearer: session.accessToken, at: server.clock.now())
            server.clock.advance(by: TOTPGenerator.period)

            let mfaToken = try Self.expectHeld(try await exchange(), factorID: factor.factorID)
            let verified = try await client.verifyMFA(mfaToken, code: factor.totp.code(at: server.clock.now()))
            #expect(verified.status == .ok, "\(verified.text)")
            let pair = try verified.decode(TokenPairResponse.self)
            #expect(pair.userID == session.userID)
            let signedIn = try claims(of: pair.accessToken)
            #expect(signedIn.aal == .aal2 && signedIn.amr == [.federated, .otp], "\(signedIn)")
        }
    }

    /// A password user links Apple, then confirms a factor: a session of before the factor cannot unlink Apple until it
    /// steps up.
    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
    func unlinkingAnIdentityNeedsAStepUp() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.federated { $0.useMailPeer(peer) }
        try await server.test(.live) { client in
            let email = newAddress()
            let password = SecondFactorAccount.password
            let session = try await client.verifiedAccount(email, password, peer: peer)
            let other = try await client.login(email, password).decode(TokenPairResponse.self)
            let linked = try await Self.appleSignIn(client, server: server, subject: "link.\(UUID().uuidString)", bearer: session.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            let factor = try await client.confirmedFactor(bearer: session.accessToken, at: server.clock.now())
            server.clock.advance(by: TOTPGenerator.period)

            let refused = try await client.send(.delete, "/api/v1/users/me/identities/apple", bearer: other.accessToken)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .aal2Required)
            let stepped = try await client.stepUp(code: factor.totp.code(at: server.clock.now()), bearer: other.accessToken)
            let pair = try stepped.decode(TokenPairResponse.self)
            let unlinked = try await client.send(.delete, "/api/v1/users/me/identities/apple", bearer: pair.accessToken)
            #expect(unlinked.status == .ok, "\(unlinked.text)")
        }
    }
}
