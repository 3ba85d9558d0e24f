import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Reads a JWT's claims without verifying it (the server verifies; the SDK only needs to know whose it is).
enum UnverifiedJWT {
    static func claims(of token: String) -> [String: Any]? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let data = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    static func subject(of token: String) -> String? { Self.claims(of: token)?["sub"] as? String }

    /// When the token expires (`exp`), if it says.
    static func expiry(of token: String) -> Date? {
        (Self.claims(of: token)?["exp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
    }
}

/// SHA-256 as 64 lowercase hexadecimal digits.
enum SHA256Hex {
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
