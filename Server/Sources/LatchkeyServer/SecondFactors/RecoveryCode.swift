import Crypto
import Foundation

/// Recovery codes: ten per set, each 10 random RFC 4648 base32 characters (50 bits) shown `XXXXX-XXXXX`, usable once.
///
/// Stored only as SHA-256 of a per-set random salt and the code; accepted in any case, with or without the dash or
/// spaces. Guessing online is bounded by the per-user failure limit (`limits.mfa-failures`).
enum RecoveryCode {
    static let count = 10
    static let length = 10
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// A new set, as shown to the user.
    static func generateSet() -> [String] {
        var generator = SystemRandomNumberGenerator()
        return (0..<Self.count).map { _ in
            let characters = (0..<Self.length).map { _ in Self.alphabet[Int.random(in: 0..<32, using: &generator)] }
            return String(characters.prefix(5)) + "-" + String(characters.suffix(5))
        }
    }

    /// The code in its canonical form (10 upper-case base32 characters), or nil when `text` cannot be one.
    static func normalize(_ text: String) -> String? {
        let characters = text.uppercased().filter { $0 != "-" && !$0.isWhitespace }
        guard characters.count == Self.length, characters.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        return characters
    }

    /// A fresh salt for a set.
    static func makeSalt() -> String { Secret.generate() }

    /// The stored form of the canonical `code` under `salt`: lowercase hex SHA-256.
    static func hash(_ code: String, salt: String) -> String {
        SHA256.hash(data: Data("\(salt):\(code)".utf8)).hexString
    }

    /// The stored forms of a set ``generateSet()`` made.
    static func hashes(of codes: [String], salt: String) -> [String] {
        codes.map { Self.hash(Self.normalize($0) ?? $0, salt: salt) }
    }

    /// The stored hash among `hashes` (one set's unused codes, under `salt`) that `typed` is, or nil. Every hash is
    /// compared, in constant time, whichever matches.
    static func match(_ typed: String, salt: String, among hashes: [String]) -> String? {
        guard let code = Self.normalize(typed) else { return nil }
        let hash = Self.hash(code, salt: salt)
        var matched: String?
        for candidate in hashes where Secret.constantTimeEquals(candidate, hash) && matched == nil { matched = candidate }
        return matched
    }
}
