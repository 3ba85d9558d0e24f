import Crypto
import LatchkeyCBOR
import _CryptoExtras

/// The credential's private key, its COSE_Key (RFC 9053) and its signatures as WebAuthn carries them.
enum CredentialKey: Sendable {
    case es256(P256.Signing.PrivateKey)
    case ed25519(Curve25519.Signing.PrivateKey)
    case rs256(_RSA.Signing.PrivateKey)

    init(_ algorithm: SoftwareAuthenticator.Algorithm) {
        switch algorithm {
        case .es256: self = .es256(P256.Signing.PrivateKey())
        case .ed25519: self = .ed25519(Curve25519.Signing.PrivateKey())
        case .rs256: self = .rs256(try! _RSA.Signing.PrivateKey(keySize: .bits2048))
        }
    }

    /// The COSE algorithm identifier.
    var algorithm: Int {
        switch self {
        case .es256: -7
        case .ed25519: -8
        case .rs256: -257
        }
    }

    /// The public key as a COSE_Key map: kty, alg, then the key type's parameters.
    var coseKey: CBOR {
        switch self {
        case .es256(let key):
            let point = Array(key.publicKey.x963Representation)
            return Self.map([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, .bytes(Array(point[1..<33]))), (-3, .bytes(Array(point[33...])))])
        case .ed25519(let key):
            return Self.map([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(6)), (-2, .bytes(Array(key.publicKey.rawRepresentation)))])
        case .rs256(let key):
            let primitives = try! key.publicKey.getKeyPrimitives()
            return Self.map([
                (1, CBOR(3)), (3, CBOR(-257)), (-1, .bytes(Array(primitives.modulus))), (-2, .bytes(Array(primitives.publicExponent))),
            ])
        }
    }

    /// A signature over `message`: DER-encoded ECDSA, raw Ed25519, or RSASSA-PKCS1-v1_5 with SHA-256.
    func signature(for message: [UInt8]) -> [UInt8] {
        switch self {
        case .es256(let key): Array(try! key.signature(for: message).derRepresentation)
        case .ed25519(let key): Array(try! key.signature(for: message))
        case .rs256(let key): Array(try! key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    private static func map(_ entries: [(Int, CBOR)]) -> CBOR {
        .map(entries.map { CBOR.Entry(key: CBOR($0.0), value: $0.1) })
    }
}
