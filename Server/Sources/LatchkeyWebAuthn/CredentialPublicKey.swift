import Crypto
import LatchkeyCBOR
import _CryptoExtras

/// A credential public key read from a COSE_Key (RFC 9052 §7, RFC 9053): ES256 on P-256, EdDSA on Ed25519, or RS256.
enum CredentialPublicKey {
    case es256(P256.Signing.PublicKey)
    case ed25519(Curve25519.Signing.PublicKey)
    case rs256(_RSA.Signing.PublicKey)

    /// COSE algorithm identifiers (IANA "COSE Algorithms").
    enum Algorithm {
        static let es256 = -7
        static let edDSA = -8
        static let rs256 = -257
    }

    /// COSE_Key labels: common parameters (RFC 9052 §7.1) and key type parameters (RFC 9053 §7).
    private enum Label {
        static let keyType = 1
        static let algorithm = 3
        static let curve = -1
        static let x = -2
        static let y = -3
        static let modulus = -1
        static let exponent = -2
    }

    init(cose: CBOR) throws(WebAuthnFailure) {
        let keyType = cose[Label.keyType]?.intValue
        let algorithm = cose[Label.algorithm]?.intValue
        switch (keyType, algorithm) {
        case (2, Algorithm.es256):
            guard cose[Label.curve]?.intValue == 1, let x = cose[Label.x]?.bytesValue, let y = cose[Label.y]?.bytesValue,
                x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
            else { throw Self.unsupported("an EC2 key that is not a point on P-256") }
            self = .es256(key)
        case (1, Algorithm.edDSA):
            // rawRepresentation refuses any length but 32 bytes.
            guard cose[Label.curve]?.intValue == 6, let x = cose[Label.x]?.bytesValue,
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x)
            else { throw Self.unsupported("an OKP key that is not an Ed25519 key") }
            self = .ed25519(key)
        case (3, Algorithm.rs256):
            guard let modulus = cose[Label.modulus]?.bytesValue, let exponent = cose[Label.exponent]?.bytesValue,
                let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent)
            else { throw Self.unsupported("an RSA key without a modulus of 2048 bits or more and an exponent") }
            self = .rs256(key)
        default:
            throw Self.unsupported("not an ES256, EdDSA (Ed25519) or RS256 key")
        }
    }

    /// The COSE algorithm of the key.
    var algorithm: Int {
        switch self {
        case .es256: Algorithm.es256
        case .ed25519: Algorithm.edDSA
        case .rs256: Algorithm.rs256
        }
    }

    /// Whether `signature` is this key's over `message`: DER-encoded ECDSA with SHA-256, Ed25519, or RSASSA-PKCS1-v1_5
    /// with SHA-256.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch self {
        case .es256(let key):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: message)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        case .rs256(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: message, padding: .insecurePKCS1v1_5)
        }
    }

    private static func unsupported(_ problem: String) -> WebAuthnFailure {
        WebAuthnFailure(.unsupportedKey, "The credential public key is \(problem).")
    }
}
