import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// Adding or removing a passkey adds or removes a way in: it needs a recent sign-in (or a DPoP proof with the session's
/// key), and for a user with a second factor a recent step-up, exactly as linking Sign in with Apple does. Removing one
/// revokes nothing else.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyStepUpTests {
    /// A session older than `tokens.recent-authentication` (600 s), refreshed: a stolen token's view.
    static func staleSession(_ client: some TestClientProtocol, _ server: TestServer, of device: TokenPairResponse) async throws -> TokenPairResponse
    {
        server.clock.advance(by: 601)
        return try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
    }

    static func expectReauthentication(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .forbidden, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .reauthenticationRequired, "\(response.text)", sourceLocation: sourceLocation)
    }

    @Test func registrationOptionsNeedARecentSignIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let stale = try await Self.staleSession(client, server, of: device)
            Self.expectReauthentication(try await client.passkeyRegistrationOptions(bearer: stale.accessToken))
            // Signing in again (the device proves itself) gives a session that may.
            let fresh = try await client.registerAgain(device)
            #expect(try await client.passkeyRegistrationOptions(bearer: fresh.accessToken).status == .ok)
        }
    }

    /// A proof with the key the session is bound to, naming the access token, stands in for a recent sign-in.
    @Test func aProofWithTheSessionsKeyStandsInForARecentSignIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let key = DPoPKey()
            let registered = try await client.registerDevice(key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            server.clock.advance(by: 3600)
            let session = try await client.refresh(registered.refreshToken, key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            let path = "/api/v1/passkeys/register/options"
            func options(_ proofKey: DPoPKey) async throws -> TestResponse {
                let proof = try proofKey.proof(
                    "POST", path, nonce: try await client.dpopNonce(), iat: server.clock.now(), accessToken: session.accessToken)
                return try await client.passkeyRegistrationOptions(bearer: session.accessToken, headers: [HTTPField.Name("DPoP")!: proof])
            }
            Self.expectReauthentication(try await options(DPoPKey()))
            let answer = try await options(key)
            #expect(answer.status == .ok, "\(answer.text)")
        }
    }

    @Test func removingAPasskeyNeedsARecentSignIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let stale = try await Self.staleSession(client, server, of: device)
            Self.expectReauthentication(try await client.removePasskey(passkey.passkeyID, bearer: stale.accessToken))
            #expect(try await client.passkeyList(bearer: stale.accessToken) == [passkey])
            let fresh = try await client.registerAgain(device)
            #expect(try await client.removePasskey(passkey.passkeyID, bearer: fresh.accessToken).status == .noContent)
        }
    }

    /// Listing and renaming change no way in: a session of any age may.
    @Test func listingAndRenamingNeedNoRecentSignIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let stale = try await Self.staleSession(client, server, of: device)
            #expect(try await client.passkeys(bearer: stale.accessToken).status == .ok)
            #expect(try await client.renamePasskey(passkey.passkeyID, to: "Old phone", bearer: stale.accessToken).status == .ok)
        }
    }

    /// A user with a confirmed TOTP factor adds a passkey only after a step-up: 403 `aal2_required` before.
    @Test func registrationOptionsOfAUserWithASecondFactorNeedAStepUp() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let factor = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())
            server.clock.advance(by: TOTPGenerator.period)
            let other = try await client.registerAgain(device)  // a fresh sign-in, at aal1
            let refused = try await client.passkeyRegistrationOptions(bearer: other.accessToken)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .aal2Required)
            let stepped = try await client.stepUp(code: factor.totp.code(at: server.clock.now()), bearer: other.accessToken)
                .decode(TokenPairResponse.self)
            #expect(try await client.passkeyRegistrationOptions(bearer: stepped.accessToken).status == .ok)
        }
    }

    @Test func removingAPasskeyOfAUserWithASecondFactorNeedsAStepUp() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let factor = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())
            server.clock.advance(by: TOTPGenerator.period)
            let other = try await client.registerAgain(device)
            let refused = try await client.removePasskey(passkey.passkeyID, bearer: other.accessToken)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .aal2Required)
            #expect(try await client.passkeyList(bearer: other.accessToken) == [passkey])
            let stepped = try await client.stepUp(code: factor.totp.code(at: server.clock.now()), bearer: other.accessToken)
                .decode(TokenPairResponse.self)
            #expect(try await client.removePasskey(passkey.passkeyID, bearer: stepped.accessToken).status == .noContent)
        }
    }

    /// A passkey with UV is possession and inherence: for a user with a TOTP factor it signs in at `aal2` without the code.
    @Test func aVerifiedPasskeySignInOfAUserWithASecondFactorIsNotHeldBack() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            _ = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())
            let answer = try await client.signInWithPasskey(&authenticator)
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(try claims(of: try answer.decode(TokenPairResponse.self).accessToken).aal == .aal2)
        }
    }

    /// Without UV (policy `preferred`) the passkey is one factor: a user with a TOTP factor is asked for it (403
    /// `mfa_required`, no tokens).
    @Test func anUnverifiedPasskeySignInOfAUserWithASecondFactorIsHeldBackForTheCode() async throws {
        let server = try await TestServer.withPasskeys(keys: ["passkeys.user-verification": "preferred"])
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            _ = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())
            let held = try await client.signInWithPasskey(&authenticator, userVerified: false)
            #expect(held.status == .forbidden, "\(held.text)")
            #expect(held.envelope?.error.code == .mfaRequired)
            #expect(held.jsonObject?["access_token"] == nil && held.jsonObject?["mfa_token"] != nil, "\(held.text)")
        }
    }

    /// Removing a passkey revokes nothing else: the session it started, the device's session and the device go on.
    @Test func removingAPasskeyRevokesNothingElse() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let newPhone = UUID().uuidString.lowercased()
            let started = try await client.signInWithPasskey(&authenticator, deviceID: newPhone).decode(TokenPairResponse.self)
            #expect(try await client.removePasskey(passkey.passkeyID, bearer: started.accessToken).status == .noContent)

            try await expectAccepted(started.accessToken, by: client)
            try await expectAccepted(device.accessToken, by: client)
            #expect(try await client.refresh(started.refreshToken).status == .ok)
            #expect(try await client.refresh(device.refreshToken).status == .ok)
            let profile = try await client.me(device.accessToken).decode(UserProfile.self)
            #expect(Set(profile.devices.map(\.deviceID)) == [device.userID, newPhone])
            #expect(try await server.sessionCount(of: device.userID, revoked: true) == 0)
        }
    }
}
