import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// Every check of issue 33 on adding a passkey, each its own test: the challenge (server-side, single use, bound to its
/// ceremony and to the session that asked, expiring), the client data, the authenticator data's flags and relying
/// party, and a credential ID registered once. A refused registration adds no passkey.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyRegistrationRuleTests {
    /// A device user asks for options and sends what `make` makes of them: 400 `invalid_passkey`, and no passkey; then
    /// the same authenticator, untampered, with fresh options, is accepted.
    static func expectRefused(
        keys: [String: String] = [:], configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation,
        _ make: @escaping @Sendable (inout SoftwareAuthenticator, PasskeyCeremony) throws -> PasskeyRegistration
    ) async throws {
        let server = try await TestServer.withPasskeys(keys: keys, configure: configure)
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var tampered = SoftwareAuthenticator()
            let refused = try await client.finishPasskeyRegistration(ceremony.challengeID, try make(&tampered, ceremony), bearer: device.accessToken)
            refused.expectInvalidPasskey(sourceLocation: sourceLocation)
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty, sourceLocation: sourceLocation)
            #expect(try await server.services.audit.events(AuditQuery(action: "passkey.add")).isEmpty, sourceLocation: sourceLocation)
            var honest = SoftwareAuthenticator()
            #expect(try await client.addPasskey(&honest, bearer: device.accessToken).name == "Passkey", sourceLocation: sourceLocation)
        }
    }

    // MARK: Client data

    @Test func aRegistrationFromAnOriginNotAllowedIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.origin = "https://evil.example"
            return authenticator.register(ceremony)
        }
    }

    /// The relying party's own domain with another scheme or port is another origin.
    @Test(arguments: ["http://latchkey.test", "https://latchkey.test:8443", "https://app.latchkey.test", "https://latchkey.test/"])
    func aRegistrationFromANearOriginIsRefused(origin: String) async throws {
        try await Self.expectRefused { authenticator, ceremony in authenticator.register(ceremony, origin: origin) }
    }

    /// `passkeys.origins` replaces the default `https://<rp-id>`: a listed origin is accepted, the default no more.
    @Test func passkeysOriginsNamesTheOriginsAccepted() async throws {
        let server = try await TestServer.withPasskeys { $0.passkeys.origins = ["https://app.latchkey.test", "https://latchkey.test:8443"] }
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            for origin in ["https://app.latchkey.test", "https://latchkey.test:8443"] {
                var authenticator = SoftwareAuthenticator()
                let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
                let answer = try await client.finishPasskeyRegistration(
                    ceremony.challengeID, authenticator.register(ceremony, origin: origin), bearer: device.accessToken)
                #expect(answer.status == .created, "\(origin): \(answer.text)")
            }
            var authenticator = SoftwareAuthenticator()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            try await client.finishPasskeyRegistration(ceremony.challengeID, authenticator.register(ceremony), bearer: device.accessToken)
                .expectInvalidPasskey()
        }
    }

    @Test func aCrossOriginRegistrationIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.crossOrigin = true
            return authenticator.register(ceremony)
        }
    }

    @Test(arguments: ["webauthn.get", "payment.get", ""])
    func clientDataOfAnotherTypeIsRefused(type: String) async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.type = type
            return authenticator.register(ceremony)
        }
    }

    @Test func clientDataSignedOverAnotherChallengeIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.clientDataOverride.challenge = randomBytes(32)
            return authenticator.register(ceremony)
        }
    }

    // MARK: Authenticator data

    @Test func authenticatorDataForAnotherRPIDIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in authenticator.register(ceremony, rpID: "evil.example") }
    }

    @Test func aRegistrationWithoutUserPresenceIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.userPresent = false
            return authenticator.register(ceremony)
        }
    }

    @Test func aRegistrationWithoutUserVerificationIsRefusedWhenRequired() async throws {
        try await Self.expectRefused { authenticator, ceremony in authenticator.register(ceremony, userVerified: false) }
    }

    @Test func aRegistrationWithoutUserVerificationIsAcceptedWhenPreferred() async throws {
        let server = try await TestServer.withPasskeys(keys: ["passkeys.user-verification": "preferred"])
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            var authenticator = SoftwareAuthenticator()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            let answer = try await client.finishPasskeyRegistration(
                ceremony.challengeID, authenticator.register(ceremony, userVerified: false), bearer: device.accessToken)
            #expect(answer.status == .created, "\(answer.text)")
        }
    }

    /// BE and BS are read and stored: `backed_up` is the BS flag.
    @Test(arguments: [(true, true), (true, false), (false, false)])
    func backedUpIsTheAuthenticatorsBackupStateFlag(eligible: Bool, backedUp: Bool) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator(backupEligible: eligible, backedUp: backedUp)
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            #expect(passkey.backedUp == backedUp)
            #expect(try await client.passkeyList(bearer: device.accessToken).map(\.backedUp) == [backedUp])
        }
    }

    /// BS without BE is a contradiction no authenticator sends.
    @Test func backedUpWithoutBackupEligibleIsRefused() async throws {
        try await Self.expectRefused { authenticator, ceremony in
            authenticator.backupEligible = false
            authenticator.backedUp = true
            return authenticator.register(ceremony)
        }
    }

    // MARK: The challenge

    @Test func aRegistrationChallengeIsSpentOnce() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var first = SoftwareAuthenticator()
            let registration = first.register(ceremony)
            #expect(try await client.finishPasskeyRegistration(ceremony.challengeID, registration, bearer: device.accessToken).status == .created)
            var second = SoftwareAuthenticator()
            try await client.finishPasskeyRegistration(ceremony.challengeID, second.register(ceremony), bearer: device.accessToken)
                .expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).count == 1)
        }
    }

    /// A refused attempt spends the challenge too: the honest registration that follows on it is refused.
    @Test func aRefusedAttemptSpendsTheChallenge() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var tampered = SoftwareAuthenticator()
            tampered.clientDataOverride.origin = "https://evil.example"
            try await client.finishPasskeyRegistration(ceremony.challengeID, tampered.register(ceremony), bearer: device.accessToken)
                .expectInvalidPasskey()
            var honest = SoftwareAuthenticator()
            try await client.finishPasskeyRegistration(ceremony.challengeID, honest.register(ceremony), bearer: device.accessToken)
                .expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
        }
    }

    /// `passkeys.challenge-lifetime` (here 60 s): answered within it, accepted; after it, refused.
    @Test func aRegistrationChallengeExpires() async throws {
        let server = try await TestServer.withPasskeys(keys: ["passkeys.challenge-lifetime": "60.0"])
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let late = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            server.clock.advance(by: 59)
            var inTime = SoftwareAuthenticator()
            #expect(try await client.addPasskey(&inTime, bearer: device.accessToken).name == "Passkey")
            server.clock.advance(by: 2)
            var tooLate = SoftwareAuthenticator()
            try await client.finishPasskeyRegistration(late.challengeID, tooLate.register(late), bearer: device.accessToken).expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).count == 1)
        }
    }

    @Test func aSignInChallengeCannotFinishARegistration() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let registration = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            let signIn = try await client.beginPasskeySignIn()
            var authenticator = SoftwareAuthenticator()
            // Made over the sign-in's challenge, sent with its challenge ID.
            let made = authenticator.register(
                PasskeyCeremony(challengeID: signIn.challengeID, challenge: signIn.challenge, userHandle: registration.userHandle))
            try await client.finishPasskeyRegistration(signIn.challengeID, made, bearer: device.accessToken).expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
        }
    }

    /// The options belong to the session that asked: another session of the same user, or another user, cannot finish.
    @Test func anotherSessionCannotFinishTheRegistration() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let sameUser = try await client.registerAgain(device)
            let stranger = try await client.registerDevice()
            for other in [sameUser, stranger] {
                let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
                var authenticator = SoftwareAuthenticator()
                try await client.finishPasskeyRegistration(ceremony.challengeID, authenticator.register(ceremony), bearer: other.accessToken)
                    .expectInvalidPasskey()
            }
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
            #expect(try await client.passkeyList(bearer: stranger.accessToken).isEmpty)
        }
    }

    @Test func anUnknownChallengeIDIsRefused() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var authenticator = SoftwareAuthenticator()
            let registration = authenticator.register(ceremony)
            for unknown in ["no-such-challenge", "", String(ceremony.challengeID.dropLast()), LatchkeyAPI.Base64URL.encode(ceremony.challenge)] {
                try await client.finishPasskeyRegistration(unknown, registration, bearer: device.accessToken).expectInvalidPasskey()
            }
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
        }
    }

    // MARK: The credential

    /// `rawId` must be the credential ID the authenticator attested.
    @Test func aRawIDThatIsNotTheAttestedCredentialIDIsRefused() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var authenticator = SoftwareAuthenticator()
            var registration = authenticator.register(ceremony)
            registration.credentialID = randomBytes(32)
            try await client.finishPasskeyRegistration(ceremony.challengeID, registration, bearer: device.accessToken).expectInvalidPasskey()
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
        }
    }

    /// A credential ID is registered once, whoever registers it again: 409 `passkey_exists`, and the passkey stays its
    /// first owner's.
    @Test(arguments: [true, false])
    func aCredentialIDAlreadyRegisteredIs409(sameUser: Bool) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (owner, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let other = sameUser ? owner : try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: other.accessToken)
            var copy = authenticator  // the same credential, offered again
            let again = try await client.finishPasskeyRegistration(ceremony.challengeID, copy.register(ceremony), bearer: other.accessToken)
            #expect(again.status == .conflict, "\(again.text)")
            #expect(again.envelope?.error.code == .passkeyExists)
            #expect(try await client.passkeyList(bearer: owner.accessToken) == [passkey])
            if !sameUser { #expect(try await client.passkeyList(bearer: other.accessToken).isEmpty) }
            // It still signs its owner in.
            let signedIn = try await client.signInWithPasskey(&authenticator)
            #expect(try signedIn.decode(TokenPairResponse.self).userID == owner.userID)
        }
    }
}
