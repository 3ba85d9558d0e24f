import Foundation
import LatchkeyAPI

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Reads a JWT's claims without verifying it (the server verifies; the SDK only needs to know whose it is).
enum UnverifiedJWT {
    static func claims(of token: String) -> [String: Any]? {
        guard let payload = Self.payload(of: token) else { return nil }
        return try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
    }

    /// The token's payload (its claims as JSON), when it is a JWT.
    static func payload(of token: String) -> Data? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        return Base64URL.decode(String(parts[1])).map { Data($0) }
    }

    /// The `aal` and `amr` claims (issue 32), when the token is a JWT; each `nil` when it does not have it.
    static func assurance(of token: String) -> AssuranceClaims? {
        Self.payload(of: token).flatMap { try? JSONDecoder().decode(AssuranceClaims.self, from: $0) }
    }

    /// How strongly a token's user was authenticated, and how.
    struct AssuranceClaims: Decodable {
        var aal: AuthenticatorAssuranceLevel?
        var amr: [AuthenticationMethod]?
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
