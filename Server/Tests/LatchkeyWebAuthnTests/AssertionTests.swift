import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// The assertion signature and the signature counter (§7.2 steps 20–22).
@Suite struct AssertionTests {
    @Test(arguments: SoftwareAuthenticator.Algorithm.allCases)
    func corruptedSignatureIsRefused(_ algorithm: SoftwareAuthenticator.Algorithm) throws {
        var authenticator = SoftwareAuthenticator(algorithm: algorithm)
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        authenticator.corruptsSignatures = true
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey) } == .badSignature)
    }

    @Test func signatureOfAnotherCredentialIsRefused() throws {
        var authenticator = SoftwareAuthenticator()
        _ = try Ceremony.publicKey(registering: &authenticator)
        var other = SoftwareAuthenticator()
        let otherPublicKey = try Ceremony.publicKey(registering: &other)
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: otherPublicKey) } == .badSignature)
    }

    @Test(arguments: [[], [0x30, 0x00], [UInt8](repeating: 0xFF, count: 72)])
    func signatureThatCannotBeParsedIsRefused(_ signature: [UInt8]) throws {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        var assertion = Ceremony.assert(&authenticator)
        assertion.signature = signature
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey) } == .badSignature)
    }

    @Test func signatureOverOtherClientDataIsRefused() throws {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        var assertion = Ceremony.assert(&authenticator)
        assertion.clientDataJSON = Ceremony.assert(&authenticator).clientDataJSON + Array(" ".utf8)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey) } == .badSignature)
    }

    func counterRefusal(stored: UInt32, sent: UInt32) throws -> WebAuthnFailure.Reason? {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        authenticator.countsSignatures = false
        authenticator.signCount = sent
        let assertion = Ceremony.assert(&authenticator)
        return refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey, storedSignCount: stored) }
    }

    @Test func counterThatDidNotIncreaseIsRefused() throws {
        #expect(try self.counterRefusal(stored: 10, sent: 10) == .signCountNotIncreasing)
        #expect(try self.counterRefusal(stored: 10, sent: 9) == .signCountNotIncreasing)
        #expect(try self.counterRefusal(stored: 10, sent: 0) == .signCountNotIncreasing)
        #expect(try self.counterRefusal(stored: .max, sent: .max) == .signCountNotIncreasing)
    }

    @Test func counterThatIncreasedIsAccepted() throws {
        #expect(try self.counterRefusal(stored: 10, sent: 11) == nil)
        #expect(try self.counterRefusal(stored: 1, sent: .max) == nil)
        #expect(try self.counterRefusal(stored: 0, sent: 1) == nil)
    }

    @Test func synchronisedPasskeysThatAlwaysSendZeroAreAccepted() throws {
        #expect(try self.counterRefusal(stored: 0, sent: 0) == nil)
    }
}
