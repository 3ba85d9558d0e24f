import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// COSE keys (RFC 9053): EC2 P-256 with ES256, OKP Ed25519 with EdDSA, RSA with RS256, nothing else.
@Suite struct CredentialPublicKeyTests {
    static func key(_ entries: [(Int, CBOR)]) -> CBOR {
        .map(entries.map { CBOR.Entry(key: CBOR($0.0), value: $0.1) })
    }

    static let x = [UInt8](repeating: 1, count: 32)

    /// Keys of other types, curves or algorithms, or with parameters missing or of the wrong length.
    static let unsupported: [CBOR] = [
        .array([]),
        key([(1, CBOR(2)), (3, CBOR(-8)), (-1, CBOR(1)), (-2, .bytes(x)), (-3, .bytes(x))]),
        key([(1, CBOR(2)), (3, CBOR(-35)), (-1, CBOR(2)), (-2, .bytes(x + x[..<16])), (-3, .bytes(x + x[..<16]))]),
        key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(2)), (-2, .bytes(x)), (-3, .bytes(x))]),
        key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes(Array(x.dropLast()))), (-3, .bytes(x))]),
        key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes(x))]),
        key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes(x)), (-3, .bytes(x))]),
        key([(1, CBOR(2)), (-1, CBOR(1)), (-2, .bytes(x)), (-3, .bytes(x))]),
        key([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(7)), (-2, .bytes(x))]),
        key([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(6)), (-2, .bytes(x + [0]))]),
        key([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(6))]),
        key([(1, CBOR(1)), (3, CBOR(-7)), (-1, CBOR(6)), (-2, .bytes(x))]),
        key([(1, CBOR(3)), (3, CBOR(-257)), (-1, .bytes([0xC1] + [UInt8](repeating: 7, count: 127))), (-2, .bytes([1, 0, 1]))]),
        key([(1, CBOR(3)), (3, CBOR(-37)), (-1, .bytes([0xC1] + [UInt8](repeating: 7, count: 255))), (-2, .bytes([1, 0, 1]))]),
        key([(1, CBOR(3)), (3, CBOR(-257)), (-2, .bytes([1, 0, 1]))]),
        key([(1, CBOR(4)), (3, CBOR(5)), (-1, .bytes(x))]),
        key([(1, .text("EC2")), (3, .text("ES256"))]),
    ]

    @Test(arguments: Self.unsupported)
    func registrationWithUnsupportedKeyIsRefused(_ key: CBOR) {
        var authenticator = SoftwareAuthenticator()
        let registration = Ceremony.register(&authenticator).changingAuthenticatorData { data in
            data = Array(data[..<(37 + 18 + 32)]) + CBOREncoder.encode(key)
        }
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(registration) } == .unsupportedKey)
    }

    @Test(arguments: Self.unsupported)
    func assertionWithUnsupportedStoredKeyIsRefused(_ key: CBOR) throws {
        var authenticator = SoftwareAuthenticator()
        _ = try Ceremony.publicKey(registering: &authenticator)
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: CBOREncoder.encode(key)) } == .unsupportedKey)
    }

    @Test func storedKeyThatIsNotCBORIsMalformed() throws {
        var authenticator = SoftwareAuthenticator()
        let publicKey = try Ceremony.publicKey(registering: &authenticator)
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: publicKey + [0]) } == .malformed)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: []) } == .malformed)
    }

    @Test func coordinatesOfTheWrongLengthsAreRefusedEvenWhenTogetherTheyMakeAPoint() throws {
        var authenticator = SoftwareAuthenticator()
        let stored = try CBORDecoder().decode(try Ceremony.publicKey(registering: &authenticator))
        let (x, y) = (stored[-2]!.bytesValue!, stored[-3]!.bytesValue!)
        let shifted = Self.key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes(Array(x.dropLast()))), (-3, .bytes([x.last!] + y))])
        let assertion = Ceremony.assert(&authenticator)
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: CBOREncoder.encode(shifted)) } == .unsupportedKey)
    }

    @Test func pointOnP256LabelledWithAnotherAlgorithmOrCurveIsRefused() throws {
        var authenticator = SoftwareAuthenticator()
        let stored = try CBORDecoder().decode(try Ceremony.publicKey(registering: &authenticator))
        let (x, y) = (CBOR.bytes(stored[-2]!.bytesValue!), CBOR.bytes(stored[-3]!.bytesValue!))
        let assertion = Ceremony.assert(&authenticator)
        let mislabelled = [
            Self.key([(1, CBOR(2)), (3, CBOR(-8)), (-1, CBOR(1)), (-2, x), (-3, y)]),
            Self.key([(1, CBOR(2)), (3, CBOR(-257)), (-1, CBOR(1)), (-2, x), (-3, y)]),
            Self.key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(2)), (-2, x), (-3, y)]),
            Self.key([(1, CBOR(2)), (3, CBOR(-7)), (-2, x), (-3, y)]),
        ]
        #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: CBOREncoder.encode(stored)) } == nil)
        for key in mislabelled {
            #expect(refusal { () throws(WebAuthnFailure) in try Ceremony.verify(assertion, publicKey: CBOREncoder.encode(key)) } == .unsupportedKey)
        }
    }

    @Test func keyWithOtherLabelsIsAccepted() throws {
        var authenticator = SoftwareAuthenticator()
        let registration = Ceremony.register(&authenticator).changingAuthenticatorData { data in
            var key = try! CBORDecoder().decode(Array(data[(37 + 18 + 32)...])).mapEntries!
            key.append(CBOR.Entry(key: CBOR(2), value: .bytes([9])))
            data = Array(data[..<(37 + 18 + 32)]) + CBOREncoder.encode(.map(key))
        }
        let verified = try Ceremony.verify(registration)
        _ = try Ceremony.verify(Ceremony.assert(&authenticator), publicKey: verified.publicKey)
    }
}
