import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// Bytes no browser sent: every one is refused with a WebAuthnFailure, and none traps.
@Suite struct MalformedInputTests {
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func randomAttestationObjectsAndAuthenticatorDataAreMalformed() throws {
        var generator = SeededGenerator(state: 7)
        var authenticator = SoftwareAuthenticator()
        let registration = Ceremony.register(&authenticator)
        let publicKey = try Ceremony.verify(registration).publicKey
        let assertion = Ceremony.assert(&authenticator)
        for _ in 0..<300 {
            let random = (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var changed = registration
            changed.attestationObject = random
            #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(changed) } == .malformed)
            var changedAssertion = assertion
            changedAssertion.authenticatorData = random
            #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(changedAssertion, publicKey: publicKey) } != nil)
        }
    }

    @Test func everyBitFlipOfARegistrationAndAnAssertionIsCheckedWithoutTrapping() throws {
        let kinds: [(SoftwareAuthenticator.Algorithm, SoftwareAuthenticator.Attestation)] = [
            (.es256, .packedX5C), (.ed25519, .packedSelf), (.rs256, .packedSelf),
        ]
        for (algorithm, attestation) in kinds {
            var authenticator = SoftwareAuthenticator(algorithm: algorithm)
            let registration = Ceremony.register(&authenticator, attestation: attestation)
            let publicKey = try Ceremony.verify(registration).publicKey
            let assertion = Ceremony.assert(&authenticator)
            for bit in 0..<(registration.attestationObject.count * 8) {
                var changed = registration
                changed.attestationObject[bit / 8] ^= 1 << (bit % 8)
                _ = refusal { () throws(WebAuthnFailure) in try Ceremony.verify(changed) }
            }
            for bit in 0..<(assertion.authenticatorData.count * 8) {
                var changed = assertion
                changed.authenticatorData[bit / 8] ^= 1 << (bit % 8)
                #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(changed, publicKey: publicKey) } != nil)
            }
        }
    }
}
