import Foundation
import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// Registrations and assertions of the software authenticator, for every algorithm and attestation, pass.
@Suite struct RoundTripTests {
    static let combinations = SoftwareAuthenticator.Algorithm.allCases.flatMap { algorithm in
        SoftwareAuthenticator.Attestation.allCases.map { (algorithm, $0) }
    }

    @Test(arguments: Self.combinations)
    func registersAndAsserts(algorithm: SoftwareAuthenticator.Algorithm, attestation: SoftwareAuthenticator.Attestation) throws {
        var authenticator = SoftwareAuthenticator(algorithm: algorithm, signCount: 5)
        let registration = Ceremony.register(&authenticator, attestation: attestation)
        let verified = try Ceremony.verify(registration)
        #expect(verified.credentialID == authenticator.credentialID)
        #expect(verified.algorithm == ["es256": -7, "ed25519": -8, "rs256": -257]["\(algorithm)"])
        #expect(verified.attestationFormat == (attestation == .none ? "none" : "packed"))
        #expect(verified.aaguid == authenticator.aaguid)
        #expect(verified.signCount == 5)
        #expect(verified.userVerified && verified.backupEligible && verified.backedUp)

        let assertion = Ceremony.assert(&authenticator)
        let asserted = try Ceremony.verify(assertion, publicKey: verified.publicKey, storedSignCount: verified.signCount)
        #expect(asserted.signCount == 6)
        #expect(asserted.userVerified && asserted.backupEligible && asserted.backedUp)
        #expect(assertion.userHandle == [7, 7, 7])
    }

    @Test func storedPublicKeyIsTheCOSEKeyAsSent() throws {
        var authenticator = SoftwareAuthenticator(algorithm: .ed25519)
        let verified = try Ceremony.verify(Ceremony.register(&authenticator))
        #expect(verified.publicKey == authenticator.credentialPublicKey)
        let key = try CBORDecoder().decode(verified.publicKey)
        #expect(key[1] == CBOR(1))
        #expect(key[3] == CBOR(-8))
        #expect(key[-2]?.bytesValue?.count == 32)
    }

    @Test func flagsAreReportedAsSent() throws {
        var authenticator = SoftwareAuthenticator(backupEligible: true, backedUp: false)
        let relyingParty = RelyingParty(id: "example.com", origins: [Ceremony.origin], userVerificationRequired: false)
        let verified = try Ceremony.verify(Ceremony.register(&authenticator, userVerified: false), relyingParty: relyingParty)
        #expect(!verified.userVerified && verified.backupEligible && !verified.backedUp)
        let asserted = try Ceremony.verify(
            Ceremony.assert(&authenticator, userVerified: false), publicKey: verified.publicKey, relyingParty: relyingParty)
        #expect(!asserted.userVerified && asserted.backupEligible && !asserted.backedUp)
    }

    @Test func extensionsThatAreAMapAreAccepted() throws {
        var authenticator = SoftwareAuthenticator()
        authenticator.extensions = .map([CBOR.Entry(key: .text("credProtect"), value: CBOR(2))])
        let verified = try Ceremony.verify(Ceremony.register(&authenticator))
        _ = try Ceremony.verify(Ceremony.assert(&authenticator), publicKey: verified.publicKey)
    }

    @Test func responseJSONIsWhatBrowsersSend() throws {
        var authenticator = SoftwareAuthenticator()
        let registration = Ceremony.register(&authenticator)
        let json = try JSONSerialization.jsonObject(with: registration.registrationResponseJSON()) as! [String: Any]
        let response = json["response"] as! [String: Any]
        #expect(json["type"] as? String == "public-key")
        #expect(json["authenticatorAttachment"] as? String == "platform")
        #expect(json["id"] as? String == json["rawId"] as? String)
        #expect(SoftwareAuthenticator.base64URLDecode(json["id"] as! String) == authenticator.credentialID)
        #expect(SoftwareAuthenticator.base64URLDecode(response["attestationObject"] as! String) == registration.attestationObject)
        #expect(response["transports"] as? [String] == ["internal"])

        let assertion = Ceremony.assert(&authenticator)
        let assertionJSON = try JSONSerialization.jsonObject(with: assertion.authenticationResponseJSON()) as! [String: Any]
        let assertionResponse = assertionJSON["response"] as! [String: Any]
        #expect(SoftwareAuthenticator.base64URLDecode(assertionResponse["signature"] as! String) == assertion.signature)
        #expect(SoftwareAuthenticator.base64URLDecode(assertionResponse["userHandle"] as! String) == [7, 7, 7])
        #expect((assertionJSON["clientExtensionResults"] as? [String: Any])?.isEmpty == true)
    }

    @Test func base64URLIsUnpaddedAndStrict() {
        #expect(SoftwareAuthenticator.base64URLEncode([0xFB, 0xFF]) == "-_8")
        #expect(SoftwareAuthenticator.base64URLDecode("-_8") == [0xFB, 0xFF])
        #expect(SoftwareAuthenticator.base64URLDecode("+/8=") == nil)
        #expect(SoftwareAuthenticator.base64URLDecode("A") == nil)
        #expect(SoftwareAuthenticator.base64URLDecode("") == [])
    }
}
