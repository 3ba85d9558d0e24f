import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// What a registration may carry (issue 33): COSE keys EC2 P-256, OKP Ed25519 and RSA, attestation `none` and `packed`
/// (self and x5c), and authenticator data and CBOR read strictly — anything else is 400 `invalid_passkey` and adds
/// nothing.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyAttestationTests {
    /// A device user sends a registration `make` makes from an honest one (attestation `none`): 400, nothing added.
    static func expectRefused(
        sourceLocation: SourceLocation = #_sourceLocation, _ make: @escaping @Sendable (PasskeyRegistration) throws -> PasskeyRegistration
    ) async throws {
        try await PasskeyRegistrationRuleTests.expectRefused(sourceLocation: sourceLocation) { authenticator, ceremony in
            try make(authenticator.register(ceremony))
        }
    }

    // MARK: Keys and formats that work

    /// Every algorithm with every attestation: registered, and then signing in.
    @Test(arguments: SoftwareAuthenticator.Algorithm.allCases, SoftwareAuthenticator.Attestation.allCases)
    func eachKeyAndAttestationRegistersAndSignsIn(
        algorithm: SoftwareAuthenticator.Algorithm, attestation: SoftwareAuthenticator.Attestation
    )
        async throws
    {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator(algorithm: algorithm)
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator, attestation: attestation)
            let signedIn = try await client.signInWithPasskey(&authenticator)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            #expect(try signedIn.decode(TokenPairResponse.self).userID == device.userID)
        }
    }

    @Test(arguments: [SoftwareAuthenticator.Attestation.packedSelf, .packedX5C])
    func aPackedAttestationWhoseSignatureDoesNotVerifyIsRefused(attestation: SoftwareAuthenticator.Attestation) async throws {
        try await PasskeyRegistrationRuleTests.expectRefused { authenticator, ceremony in
            authenticator.corruptsSignatures = true
            return authenticator.register(ceremony, attestation: attestation)
        }
    }

    /// A packed x5c certificate naming another AAGUID than the authenticator data (WebAuthn §8.2.1).
    @Test func aPackedCertificateOfAnotherAAGUIDIsRefused() async throws {
        try await PasskeyRegistrationRuleTests.expectRefused { authenticator, ceremony in
            authenticator.certificateAAGUID = Array("someone-else-000".utf8)
            return authenticator.register(ceremony, attestation: .packedX5C)
        }
    }

    // MARK: Keys and formats that do not

    /// COSE keys other than ES256 on P-256, EdDSA on Ed25519 and RS256 — some of them real P-256 points under another
    /// label, so only the label refuses them.
    static let unsupportedKeys: [(String, CBOR)] = {
        let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        let (x, y): (CBOR, CBOR) = (.bytes(Array(point[1..<33])), .bytes(Array(point[33...])))
        return [
            (
                "EC2 P-384 ES384",
                .labelled([(1, CBOR(2)), (3, CBOR(-35)), (-1, CBOR(2)), (-2, .bytes(randomBytes(48))), (-3, .bytes(randomBytes(48)))])
            ),
            ("a P-256 point labelled ES384", .labelled([(1, CBOR(2)), (3, CBOR(-35)), (-1, CBOR(1)), (-2, x), (-3, y)])),
            ("a P-256 point without alg", .labelled([(1, CBOR(2)), (-1, CBOR(1)), (-2, x), (-3, y)])),
            ("a P-256 point labelled OKP", .labelled([(1, CBOR(1)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, x), (-3, y)])),
            ("OKP X25519", .labelled([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(4)), (-2, .bytes(randomBytes(32)))])),
            ("OKP Ed448", .labelled([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(7)), (-2, .bytes(randomBytes(57)))])),
            ("symmetric", .labelled([(1, CBOR(4)), (3, CBOR(5)), (-1, .bytes(randomBytes(32)))])),
            ("RSA PS256", .labelled([(1, CBOR(3)), (3, CBOR(-37)), (-1, .bytes(randomBytes(256))), (-2, .bytes([1, 0, 1]))])),
            ("RSA 1024-bit", .labelled([(1, CBOR(3)), (3, CBOR(-257)), (-1, .bytes([0xC1] + randomBytes(127))), (-2, .bytes([1, 0, 1]))])),
            (
                "not on the curve",
                .labelled([
                    (1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes([UInt8](repeating: 1, count: 32))),
                    (-3, .bytes([UInt8](repeating: 2, count: 32))),
                ])
            ),
            ("kty as text", .map([CBOR.Entry(key: CBOR(1), value: .text("EC2")), CBOR.Entry(key: CBOR(3), value: CBOR(-7))])),
            ("not a map", .array([CBOR(2), CBOR(-7)])),
        ]
    }()

    @Test(arguments: Self.unsupportedKeys.map(\.0))
    func aCredentialKeyOfAnUnsupportedKindIsRefused(kind: String) async throws {
        let key = try #require(Self.unsupportedKeys.first { $0.0 == kind }?.1)
        try await Self.expectRefused { registration in try registration.changingAuthenticatorData { $0.publicKey = key } }
    }

    @Test(arguments: ["fido-u2f", "tpm", "android-key", "android-safetynet", "apple", "NONE", "Packed", ""])
    func anAttestationFormatOtherThanNoneOrPackedIsRefused(format: String) async throws {
        try await Self.expectRefused { registration in registration.attesting(try registration.authenticatorData, format: format) }
    }

    /// `packed` needs its statement: `alg` and `sig` (and `x5c`, if any, an array of certificates).
    @Test(arguments: ["empty", "no sig", "alg mismatch", "x5c not an array"])
    func aPackedStatementThatIsMalformedIsRefused(problem: String) async throws {
        try await PasskeyRegistrationRuleTests.expectRefused { authenticator, ceremony in
            let registration = authenticator.register(ceremony, attestation: .packedSelf)
            let object = try CBORDecoder().decode(registration.attestationObject)
            let statement = try #require(object["attStmt"])
            let signature = statement["sig"] ?? .bytes([])
            let changed: CBOR =
                switch problem {
                case "empty": .map([])
                case "no sig": .map([CBOR.Entry(key: .text("alg"), value: CBOR(-7))])
                case "alg mismatch": .map([CBOR.Entry(key: .text("alg"), value: CBOR(-257)), CBOR.Entry(key: .text("sig"), value: signature)])
                default:
                    .map([
                        CBOR.Entry(key: .text("alg"), value: CBOR(-7)), CBOR.Entry(key: .text("sig"), value: signature),
                        CBOR.Entry(key: .text("x5c"), value: .bytes(randomBytes(64))),
                    ])
                }
            return registration.attesting(try registration.authenticatorData, format: "packed", statement: changed)
        }
    }

    // MARK: Strict parsing

    @Test func leftoverBytesAfterTheAuthenticatorDataAreRefused() async throws {
        try await Self.expectRefused { registration in try registration.attesting(registration.authenticatorData + [0x00]) }
    }

    @Test(arguments: [CBOR.array([.unsigned(1)]), .text("credProtect"), .bytes([0xA0])])
    func extensionsThatAreNotAMapAreRefused(extensions: CBOR) async throws {
        try await PasskeyRegistrationRuleTests.expectRefused { authenticator, ceremony in
            authenticator.extensions = extensions
            return authenticator.register(ceremony)
        }
    }

    /// The ED flag says extensions follow: none following is malformed, and so are extensions without the flag.
    @Test(arguments: ["flag without extensions", "extensions without flag"])
    func extensionsAndTheirFlagMustAgree(problem: String) async throws {
        try await Self.expectRefused { registration in
            try registration.changingAuthenticatorData { data in
                if problem == "flag without extensions" {
                    data.flags |= 0x80
                } else {
                    data.rest = CBOREncoder.encode(.map([CBOR.Entry(key: .text("credProtect"), value: .unsigned(1))]))
                }
            }
        }
    }

    @Test func extensionsThatAreAMapAreAccepted() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            authenticator.extensions = .map([CBOR.Entry(key: .text("credProtect"), value: .unsigned(2))])
            _ = try await client.deviceUserWithPasskey(&authenticator)
        }
    }

    /// Indefinite lengths are refused wherever they appear: the attestation object, its authData, the credential key.
    @Test(arguments: ["attestation object", "authData", "credential key", "attStmt"])
    func indefiniteLengthCBORIsRefused(place: String) async throws {
        try await Self.expectRefused { registration in
            let authenticatorData = try registration.authenticatorData
            var changed = registration
            let entries = { (authData: [UInt8], statement: [UInt8]) in
                [0xA3] + CBOREncoder.encode(.text("fmt")) + CBOREncoder.encode(.text("none")) + CBOREncoder.encode(.text("attStmt")) + statement
                    + CBOREncoder.encode(.text("authData")) + authData
            }
            switch place {
            case "attestation object":
                changed.attestationObject = IndefiniteCBOR.map(
                    [
                        CBOR.Entry(key: .text("fmt"), value: .text("none")), CBOR.Entry(key: .text("attStmt"), value: .map([])),
                        CBOR.Entry(key: .text("authData"), value: .bytes(authenticatorData)),
                    ])
            case "authData":
                changed.attestationObject = entries(IndefiniteCBOR.bytes(authenticatorData), [0xA0])
            case "attStmt":
                changed.attestationObject = entries(CBOREncoder.encode(.bytes(authenticatorData)), [0xBF, 0xFF])
            default:
                var parts = try RegistrationAuthenticatorData(authenticatorData)
                let key = try #require(parts.publicKey.mapEntries)
                let prefix =
                    parts.rpIDHash + [parts.flags] + parts.signCount + parts.aaguid
                    + [UInt8(parts.credentialID.count >> 8), UInt8(parts.credentialID.count & 0xFF)] + parts.credentialID
                parts.rest = []
                changed.attestationObject = CBOREncoder.encode(
                    PasskeyRegistration.attestationObject(format: "none", statement: .map([]), authenticatorData: prefix + IndefiniteCBOR.map(key)))
            }
            return changed
        }
    }
}
