import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// Every check of issue 33 on signing in with a passkey, each its own test: the challenge, the client data, the
/// authenticator data, the signature with the stored key, the signature counter (a clone), the user handle, and a
/// credential that is unknown or whose user is gone. A refused sign-in starts no session and leaves the passkey as it was.
@Suite(.timeLimit(.minutes(3)))
struct PasskeySignInRuleTests {
    /// A device user with a passkey; a sign-in with what `make` makes of fresh options is 400 `invalid_passkey`, starts no
    /// session and leaves the passkey unused; then the authenticator, untampered, signs in.
    static func expectRefused(
        keys: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation,
        _ make: @escaping @Sendable (inout SoftwareAuthenticator, PasskeyCeremony) throws -> PasskeyAssertion
    ) async throws {
        let server = try await TestServer.withPasskeys(keys: keys)
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let ceremony = try await client.beginPasskeySignIn()
            var tampered = authenticator
            let refused = try await client.finishPasskeySignIn(ceremony.challengeID, try make(&tampered, ceremony))
            refused.expectInvalidPasskey(sourceLocation: sourceLocation)
            #expect(try await client.passkeyList(bearer: device.accessToken) == [passkey], sourceLocation: sourceLocation)
            #expect(
                try await server.sessionCount(of: device.userID) == 1, "a session started",
                sourceLocation: sourceLocation)
            let honest = try await client.signInWithPasskey(&authenticator)
            #expect(honest.status == .ok, "\(honest.text)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Client data

    @Test func anAssertionFromAnOriginNotAllowedIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.origin = "https://evil.example"
            return authenticator.assert(ceremony)
        }
    }

    @Test func aCrossOriginAssertionIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.crossOrigin = true
            return authenticator.assert(ceremony)
        }
    }

    @Test(arguments: ["webauthn.create", "payment.get", ""])
    func clientDataOfAnotherTypeIsRefused(type: String) async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.type = type
            return authenticator.assert(ceremony)
        }
    }

    @Test func anAssertionOverAnotherChallengeIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.challenge = randomBytes(32)
            return authenticator.assert(ceremony)
        }
    }

    // MARK: Authenticator data and signature

    @Test func anAssertionForAnotherRPIDIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in authenticator.assert(ceremony, rpID: "evil.example") }
    }

    @Test func anAssertionWithoutUserPresenceIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.userPresent = false
            return authenticator.assert(ceremony)
        }
    }

    @Test func anAssertionWithoutUserVerificationIsRefusedWhenRequired() async throws {
        try await Self.expectRefused { authenticator, ceremony in authenticator.assert(ceremony, userVerified: false) }
    }

    /// With `passkeys.user-verification` `preferred`, an assertion without UV signs in with one factor: `amr ["hwk"]`, `aal1`.
    @Test func anAssertionWithoutUserVerificationSignsInWithOneFactorWhenPreferred() async throws {
        let server = try await TestServer.withPasskeys(keys: ["passkeys.user-verification": "preferred"])
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let answer = try await client.signInWithPasskey(&authenticator, userVerified: false)
            #expect(answer.status == .ok, "\(answer.text)")
            let pair = try answer.decode(TokenPairResponse.self)
            #expect(pair.userID == device.userID)
            let oneFactor = try claims(of: pair.accessToken)
            #expect(oneFactor.amr == [.hardwareKey] && oneFactor.aal == .aal1, "\(oneFactor)")
            // With UV the same passkey is two factors.
            let verified = try claims(of: try await client.signInWithPasskey(&authenticator).decode(TokenPairResponse.self).accessToken)
            #expect(verified.amr == [.hardwareKey, .user] && verified.aal == .aal2, "\(verified)")
        }
    }

    @Test func aTamperedSignatureIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.corruptsSignatures = true
            return authenticator.assert(ceremony)
        }
    }

    /// The signature covers the authenticator data: data changed after signing (the UV flag set, say) does not verify.
    @Test func authenticatorDataChangedAfterSigningIsRefused() async throws {
        try await Self.expectRefused(keys: ["passkeys.user-verification": "preferred"]) { authenticator, ceremony in
            var assertion = authenticator.assert(ceremony, userVerified: false)
            assertion.authenticatorData[32] |= 0x04
            return assertion
        }
    }

    /// Another credential's signature over the same data does not verify with the stored key.
    @Test func aSignatureByAnotherKeyIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            var assertion = authenticator.assert(ceremony)
            let impostor = SoftwareAuthenticator()
            assertion.signature = impostor.signature(authenticatorData: assertion.authenticatorData, clientDataJSON: assertion.clientDataJSON)
            return assertion
        }
    }

    @Test func leftoverBytesAfterTheAuthenticatorDataAreRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            var assertion = authenticator.assert(ceremony)
            assertion.authenticatorData += [0x00]
            assertion.signature = authenticator.signature(authenticatorData: assertion.authenticatorData, clientDataJSON: assertion.clientDataJSON)
            return assertion
        }
    }

    @Test(arguments: [CBOR.array([.unsigned(1)]), .text("credProtect"), .unsigned(7)])
    func extensionsThatAreNotAMapAreRefused(extensions: CBOR) async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.extensions = extensions
            return authenticator.assert(ceremony)
        }
    }

    @Test func extensionsThatAreAMapAreAccepted() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            _ = try await client.deviceUserWithPasskey(&authenticator)
            authenticator.extensions = .map([CBOR.Entry(key: .text("credProtect"), value: .unsigned(1))])
            let answer = try await client.signInWithPasskey(&authenticator)
            #expect(answer.status == .ok, "\(answer.text)")
        }
    }

    // MARK: The challenge

    /// An assertion seen on the wire cannot be sent again.
    @Test func aSignInChallengeIsSpentOnce() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let ceremony = try await client.beginPasskeySignIn()
            let assertion = authenticator.assert(ceremony)
            #expect(try await client.finishPasskeySignIn(ceremony.challengeID, assertion).status == .ok)
            try await client.finishPasskeySignIn(ceremony.challengeID, assertion).expectInvalidPasskey()
            // A new assertion (a higher counter) over the spent challenge is refused too.
            try await client.finishPasskeySignIn(ceremony.challengeID, authenticator.assert(ceremony)).expectInvalidPasskey()
            #expect(try await server.sessionCount(of: device.userID) == 2)
        }
    }

    @Test func aRefusedAttemptSpendsTheChallenge() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            _ = try await client.deviceUserWithPasskey(&authenticator)
            let ceremony = try await client.beginPasskeySignIn()
            var tampered = authenticator
            tampered.corruptsSignatures = true
            try await client.finishPasskeySignIn(ceremony.challengeID, tampered.assert(ceremony)).expectInvalidPasskey()
            try await client.finishPasskeySignIn(ceremony.challengeID, authenticator.assert(ceremony)).expectInvalidPasskey()
        }
    }

    /// `passkeys.challenge-lifetime` (300 s by default): answered within it, signed in; after it, refused.
    @Test func aSignInChallengeExpires() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let inTime = try await client.beginPasskeySignIn()
            let late = try await client.beginPasskeySignIn()
            server.clock.advance(by: 299)
            #expect(try await client.finishPasskeySignIn(inTime.challengeID, authenticator.assert(inTime)).status == .ok)
            server.clock.advance(by: 2)
            try await client.finishPasskeySignIn(late.challengeID, authenticator.assert(late)).expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).first?.lastUsedAt == passkey.createdAt.addingTimeInterval(299))
        }
    }

    @Test func aRegistrationChallengeCannotFinishASignIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let registration = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            try await client.finishPasskeySignIn(registration.challengeID, authenticator.assert(registration)).expectInvalidPasskey()
            #expect(try await server.sessionCount(of: device.userID) == 1)
        }
    }

    // MARK: The user handle

    @Test func aUserHandleThatIsNotThePasskeysUserIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            var assertion = authenticator.assert(ceremony)
            assertion.userHandle = uuidBytes(UUID().uuidString)
            return assertion
        }
    }
}
