import Crypto
import ExtrasBase64
import Foundation

/// Random bearer secrets (refresh tokens, device secrets) and their stored form.
enum Secret {
    /// 256 random bits, base64url without padding (43 characters).
    static func generate() -> String {
        // BoringSSL's CSPRNG, seeded from the kernel: no system call per byte.
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64URLEncodedString()
    }

    /// The only form in which a secret is stored: lowercase hex SHA-256.
    ///
    /// A fast hash is enough: the secrets carry 256 bits of entropy, so there is nothing to brute-force.
    static func hash(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).hexString
    }

    /// Compares two strings in time independent of where they differ.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

extension Sequence<UInt8> {
    var hexString: String {
        self.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

extension Data {
    /// Base64url without padding (RFC 4648 §5).
    func base64URLEncodedString() -> String {
        Base64.encodeToString(bytes: self, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Decodes base64url with or without padding; nil when it is not base64url.
    init?(base64URLEncoded text: String) {
        guard let bytes = try? Base64.decode(string: text, options: [.base64UrlAlphabet, .omitPaddingCharacter]) else { return nil }
        self.init(bytes)
    }
}
