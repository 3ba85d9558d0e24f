import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// clientDataJSON (§7.1 steps 7–10, §7.2 steps 11–14).
@Suite struct ClientDataTests {
    func registrationRefusal(_ override: SoftwareAuthenticator.ClientDataOverride) -> WebAuthnFailure.Reason? {
        var authenticator = SoftwareAuthenticator()
        authenticator.clientDataOverride = override
        let registration = Ceremony.register(&authenticator)
        return refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration) }
    }

    func assertionRefusal(_ override: SoftwareAuthenticator.ClientDataOverride) throws -> WebAuthnFailure.Reason? {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        authenticator.clientDataOverride = override
        let assertion = Ceremony.assert(&authenticator)
        return refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey) }
    }

    func registrationRefusal(clientDataJSON: String) -> WebAuthnFailure.Reason? {
        var authenticator = SoftwareAuthenticator()
        var registration = Ceremony.register(&authenticator)
        registration.clientDataJSON = Array(clientDataJSON.utf8)
        return refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration) }
    }

    @Test func registrationWithAssertionTypeIsRefused() {
        #expect(self.registrationRefusal(.init(type: "webauthn.get")) == .wrongType)
    }

    @Test func assertionWithRegistrationTypeIsRefused() throws {
        #expect(try self.assertionRefusal(.init(type: "webauthn.create")) == .wrongType)
    }

    @Test func otherChallengeIsRefused() throws {
        #expect(self.registrationRefusal(.init(challenge: Array(1...32))) == .challengeMismatch)
        #expect(try self.assertionRefusal(.init(challenge: Array(Ceremony.challenge.dropLast()))) == .challengeMismatch)
    }

    @Test func paddedOrStandardBase64ChallengeIsRefused() {
        let padded = SoftwareAuthenticator.base64URLEncode(Ceremony.challenge) + "="
        let json = #"{"type":"webauthn.create","challenge":"\#(padded)","origin":"https://example.com"}"#
        #expect(self.registrationRefusal(clientDataJSON: json) == .challengeMismatch)
    }

    @Test func originNotOfTheRelyingPartyIsRefused() throws {
        #expect(self.registrationRefusal(.init(origin: "https://example.com.evil.test")) == .originNotAllowed)
        #expect(try self.assertionRefusal(.init(origin: "https://example.com/")) == .originNotAllowed)
    }

    @Test func everyOriginOfTheRelyingPartyIsAccepted() {
        #expect(self.registrationRefusal(.init(origin: "https://app.example.com")) == nil)
    }

    @Test func crossOriginIsRefused() throws {
        #expect(self.registrationRefusal(.init(crossOrigin: true)) == .crossOrigin)
        #expect(try self.assertionRefusal(.init(crossOrigin: true)) == .crossOrigin)
    }

    @Test func crossOriginAbsentAndTopOriginAreAccepted() {
        let challenge = SoftwareAuthenticator.base64URLEncode(Ceremony.challenge)
        let json = #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://example.com","topOrigin":"https://x.test","other":[1]}"#
        #expect(self.registrationRefusal(clientDataJSON: json) == nil)
    }

    @Test(arguments: [
        "", "not json", "[]", "\"webauthn.create\"", #"{"type":"webauthn.create"}"#,
        #"{"type":"webauthn.create","challenge":"AA","origin":"https://example.com","crossOrigin":"no"}"#,
        #"{"type":1,"challenge":"AA","origin":"https://example.com"}"#,
    ])
    func clientDataThatIsNotTheJSONObjectIsMalformed(_ json: String) {
        #expect(self.registrationRefusal(clientDataJSON: json) == .malformed)
    }

    @Test func oversizedClientDataIsMalformed() {
        let challenge = SoftwareAuthenticator.base64URLEncode(Ceremony.challenge)
        let padding = String(repeating: "x", count: 16_384)
        let json = #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://example.com","pad":"\#(padding)"}"#
        #expect(self.registrationRefusal(clientDataJSON: json) == .malformed)
    }

    @Test func clientDataThatIsNotUTF8IsMalformed() {
        var authenticator = SoftwareAuthenticator()
        var registration = Ceremony.register(&authenticator)
        registration.clientDataJSON += [0xFF]
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration) } == .malformed)
    }
}
