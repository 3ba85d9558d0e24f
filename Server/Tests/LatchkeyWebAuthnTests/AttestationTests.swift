import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// The attestation object (§6.5) and the `none` and `packed` statement formats (§8.2, §8.7).
@Suite struct AttestationTests {
    func registration(
        _ attestation: SoftwareAuthenticator.Attestation, _ change: (inout SoftwareAuthenticator) -> Void = { _ in }
    )
        -> PasskeyRegistration
    {
        var authenticator = SoftwareAuthenticator()
        change(&authenticator)
        return Ceremony.register(&authenticator, attestation: attestation)
    }

    func registrationRefusal(_ registration: PasskeyRegistration) -> WebAuthnFailure.Reason? {
        refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration) }
    }

    func statement(of registration: PasskeyRegistration) -> [CBOR.Entry] {
        try! CBORDecoder().decode(registration.attestationObject)["attStmt"]!.mapEntries!
    }

    /// The registration with its attestation statement changed by `change`.
    func changingStatement(of registration: PasskeyRegistration, _ change: (inout [CBOR.Entry]) -> Void) -> PasskeyRegistration {
        var entries = self.statement(of: registration)
        change(&entries)
        return registration.replacing("attStmt", with: .map(entries))
    }

    @Test(arguments: ["", "00", "80", "a0", "a363666d74646e6f6e65", "a1636d6e7400"])
    func attestationObjectThatIsNotTheMapIsMalformed(_ hexadecimal: String) {
        var registration = self.registration(.none)
        registration.attestationObject = stride(from: 0, to: hexadecimal.count, by: 2).map {
            UInt8(hexadecimal.dropFirst($0).prefix(2), radix: 16)!
        }
        #expect(self.registrationRefusal(registration) == .malformed)
    }

    @Test func attestationObjectMembersOfTheWrongKindAreMalformed() {
        let registration = self.registration(.none)
        #expect(self.registrationRefusal(registration.replacing("fmt", with: CBOR(1))) == .malformed)
        #expect(self.registrationRefusal(registration.replacing("attStmt", with: .array([]))) == .malformed)
        #expect(self.registrationRefusal(registration.replacing("authData", with: .text("data"))) == .malformed)
    }

    @Test func attestationObjectWithAnotherMemberOrTrailingBytesIsMalformed() {
        var registration = self.registration(.none)
        var entries = try! CBORDecoder().decode(registration.attestationObject).mapEntries!
        entries.append(CBOR.Entry(key: .text("epAtt"), value: .bool(true)))
        var extended = registration
        extended.attestationObject = CBOREncoder.encode(.map(entries))
        #expect(self.registrationRefusal(extended) == .malformed)
        registration.attestationObject.append(0)
        #expect(self.registrationRefusal(registration) == .malformed)
    }

    @Test(arguments: ["fido-u2f", "tpm", "android-key", "android-safetynet", "apple", "None", ""])
    func otherFormatsAreUnsupported(_ format: String) {
        #expect(self.registrationRefusal(self.registration(.none).replacing("fmt", with: .text(format))) == .unsupportedAttestation)
    }

    @Test func noneWithAStatementIsRefused() {
        let registration = self.registration(.none).replacing("attStmt", with: .map([CBOR.Entry(key: .text("alg"), value: CBOR(-7))]))
        #expect(self.registrationRefusal(registration) == .badAttestation)
    }

    @Test func packedSelfAttestationWithAnotherAlgorithmIsRefused() {
        let registration = self.changingStatement(of: self.registration(.packedSelf)) { $0[0].value = CBOR(-257) }
        #expect(self.registrationRefusal(registration) == .badAttestation)
    }

    @Test(arguments: [SoftwareAuthenticator.Attestation.packedSelf, .packedX5C])
    func packedSignatureThatDoesNotVerifyIsRefused(_ attestation: SoftwareAuthenticator.Attestation) {
        #expect(self.registrationRefusal(self.registration(attestation) { $0.corruptsSignatures = true }) == .badAttestation)
    }

    @Test func packedSignatureOverOtherClientDataIsRefused() {
        var registration = self.registration(.packedX5C)
        registration.clientDataJSON = Array(
            String(decoding: registration.clientDataJSON, as: UTF8.self).replacingOccurrences(of: "}", with: ",\"x\":1}").utf8)
        #expect(self.registrationRefusal(registration) == .badAttestation)
    }

    @Test func packedCertificateWhoseKeyDidNotSignIsRefused() {
        let certificate = self.statement(of: self.registration(.packedX5C)).first { $0.key == .text("x5c") }!
        let selfSigned = self.changingStatement(of: self.registration(.packedSelf)) { $0.append(certificate) }
        #expect(self.registrationRefusal(selfSigned) == .badAttestation)
    }

    @Test func packedCertificateNamingAnotherAAGUIDIsRefused() {
        #expect(self.registrationRefusal(self.registration(.packedX5C) { $0.certificateAAGUID = Array(repeating: 0, count: 16) }) == .badAttestation)
        #expect(self.registrationRefusal(self.registration(.packedX5C) { $0.certificateAAGUID = Array("latchkey-testing".utf8) }) == nil)
    }

    @Test func packedCertificateThatIsNotACertificateIsRefused() {
        let registration = self.registration(.packedX5C)
        let notCertificates: [CBOR] = [.array([]), .array([.bytes([0x30, 0x03, 0x02, 0x01, 0x01])]), .array([.text("MII")]), .bytes([0x30])]
        for x5c in notCertificates {
            let changed = self.changingStatement(of: registration) { $0[2].value = x5c }
            #expect(self.registrationRefusal(changed) == .badAttestation)
        }
    }

    @Test func packedStatementWithMembersMissingOrUnknownIsRefused() {
        let registration = self.registration(.packedSelf)
        #expect(self.registrationRefusal(self.changingStatement(of: registration) { $0.removeLast() }) == .badAttestation)
        #expect(self.registrationRefusal(self.changingStatement(of: registration) { $0.removeFirst() }) == .badAttestation)
        #expect(
            self.registrationRefusal(self.changingStatement(of: registration) { $0.append(CBOR.Entry(key: .text("ecdaaKeyId"), value: .bytes([]))) })
                == .badAttestation)
        #expect(self.registrationRefusal(self.changingStatement(of: registration) { $0[1].value = .text("signature") }) == .badAttestation)
    }

    @Test func packedCertificateWithAnUnsupportedAlgorithmIsRefused() {
        let registration = self.changingStatement(of: self.registration(.packedX5C)) { $0[0].value = CBOR(-35) }
        #expect(self.registrationRefusal(registration) == .badAttestation)
    }
}
