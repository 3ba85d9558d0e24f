import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// Authenticator data (§6.1; §7.1 steps 13–17, §7.2 steps 15–18).
@Suite struct AuthenticatorDataTests {
    func registrationRefusal(_ registration: PasskeyRegistration, relyingParty: RelyingParty = Ceremony.relyingParty) -> WebAuthnFailure.Reason? {
        refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration, relyingParty: relyingParty) }
    }

    /// The reason an assertion with its authenticator data changed by `change` (and signed again) is refused for.
    func assertionRefusal(_ change: (inout [UInt8]) -> Void) throws -> WebAuthnFailure.Reason? {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        var assertion = Ceremony.assert(&authenticator)
        change(&assertion.authenticatorData)
        assertion.signature = authenticator.signature(authenticatorData: assertion.authenticatorData, clientDataJSON: assertion.clientDataJSON)
        return refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey) }
    }

    var registration: PasskeyRegistration {
        var authenticator = SoftwareAuthenticator()
        return Ceremony.register(&authenticator)
    }

    @Test func otherRelyingPartyIDIsRefused() throws {
        let other = RelyingParty(id: "example.org", origins: [Ceremony.origin], userVerificationRequired: true)
        #expect(self.registrationRefusal(self.registration, relyingParty: other) == .rpIDMismatch)
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey, relyingParty: other) } == .rpIDMismatch)
    }

    @Test func userNotPresentIsRefused() throws {
        var authenticator = SoftwareAuthenticator()
        authenticator.userPresent = false
        #expect(self.registrationRefusal(Ceremony.register(&authenticator)) == .userNotPresent)
        #expect(try self.assertionRefusal { $0[32] &= ~0x01 } == .userNotPresent)
    }

    @Test func userNotVerifiedIsRefusedWhenRequired() throws {
        var authenticator = SoftwareAuthenticator()
        #expect(self.registrationRefusal(Ceremony.register(&authenticator, userVerified: false)) == .userNotVerified)
        #expect(try self.assertionRefusal { $0[32] &= ~0x04 } == .userNotVerified)
    }

    @Test func userNotVerifiedIsAcceptedWhenNotRequired() {
        var authenticator = SoftwareAuthenticator()
        let relyingParty = RelyingParty(id: "example.com", origins: [Ceremony.origin], userVerificationRequired: false)
        #expect(self.registrationRefusal(Ceremony.register(&authenticator, userVerified: false), relyingParty: relyingParty) == nil)
    }

    @Test func backedUpWithoutBackupEligibleIsMalformed() throws {
        var authenticator = SoftwareAuthenticator(backupEligible: false, backedUp: true)
        #expect(self.registrationRefusal(Ceremony.register(&authenticator)) == .malformed)
        #expect(try self.assertionRefusal { $0[32] = $0[32] & ~0x08 | 0x10 } == .malformed)
    }

    @Test func signCountIsBigEndian() throws {
        var authenticator = SoftwareAuthenticator(signCount: 0x0102_0304)
        #expect(try Ceremony.verify(Ceremony.register(&authenticator)).signCount == 0x0102_0304)
    }

    @Test func shorterThan37BytesIsMalformed() throws {
        #expect(
            self.registrationRefusal(self.registration.replacing("authData", with: .bytes(Array(self.registration.authenticatorData[..<36]))))
                == .malformed)
        #expect(try self.assertionRefusal { $0.removeLast() } == .malformed)
    }

    @Test func registrationWithoutAttestedCredentialDataIsMalformed() {
        let withoutCredential = self.registration.changingAuthenticatorData {
            $0[32] &= ~0x40
            $0.removeSubrange(37...)
        }
        #expect(self.registrationRefusal(withoutCredential) == .malformed)
    }

    @Test func assertionWithAttestedCredentialDataIsMalformed() throws {
        let attested = self.registration.authenticatorData
        #expect(
            try self.assertionRefusal {
                $0 = Array($0[..<37]) + attested[37...]
                $0[32] |= 0x40
            } == .malformed)
    }

    @Test func leftoverBytesAreMalformed() throws {
        #expect(self.registrationRefusal(self.registration.changingAuthenticatorData { $0.append(0) }) == .malformed)
        #expect(try self.assertionRefusal { $0.append(0xA0) } == .malformed)
    }

    @Test func extensionsThatAreNotOneMapAreMalformed() throws {
        #expect(
            self.registrationRefusal(
                self.registration.changingAuthenticatorData {
                    $0[32] |= 0x80
                    $0.append(0x80)
                }) == .malformed)
        #expect(self.registrationRefusal(self.registration.changingAuthenticatorData { $0[32] |= 0x80 }) == .malformed)
        #expect(
            try self.assertionRefusal {
                $0[32] |= 0x80
                $0 += [0x61, 0x61]
            } == .malformed)
    }

    @Test func credentialIDLongerThan1023BytesIsMalformed() throws {
        let registration = self.registration
        let withLongID = registration.changingAuthenticatorData { data in
            let key = Array(data[(37 + 18 + 32)...])
            data = Array(data[..<53]) + [0x04, 0x00] + [UInt8](repeating: 1, count: 1024) + key
        }
        #expect(self.registrationRefusal(withLongID) == .malformed)
        let withLongestID = registration.changingAuthenticatorData { data in
            let key = Array(data[(37 + 18 + 32)...])
            data = Array(data[..<53]) + [0x03, 0xFF] + [UInt8](repeating: 1, count: 1023) + key
        }
        #expect(try Ceremony.verify(withLongestID).credentialID.count == 1023)
    }

    @Test func attestedCredentialDataCutShortIsMalformed() {
        let data = self.registration.authenticatorData
        for length in [38, 54, 55, 60, 87, 90, data.count - 1] {
            #expect(self.registrationRefusal(self.registration.replacing("authData", with: .bytes(Array(data[..<length])))) == .malformed)
        }
    }
}
