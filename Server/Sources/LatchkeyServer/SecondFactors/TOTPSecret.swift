import ExtrasBase64
import Foundation
import HummingbirdOTP

/// A TOTP factor's secret and its arithmetic: RFC 6238 with HMAC-SHA-1, 6 digits and 30-second steps, computed by
/// HummingbirdOTP.
///
/// HummingbirdOTP keys its HMAC with the UTF-8 bytes of a string secret, so the secret is 32 characters drawn at random
/// from the RFC 4648 base32 alphabet (32 × 5 = 160 random bits), and the key is those 32 ASCII bytes. What an
/// authenticator app is given — the `secret` shown at enrolment and in the `otpauth://` URI — is the base32 of those
/// bytes, which such apps decode back to the same key.
struct TOTPSecret: Sendable, CustomStringConvertible {
    /// The 32 random characters, the HMAC key's text. Stored only sealed with the master key.
    let text: String

    static let digits = 6
    static let step: TimeInterval = 30
    /// Steps either side of the current one that a code may be from (clocks drift; a code typed late).
    static let skew: Int64 = 1
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    init(text: String) { self.text = text }

    /// A new secret of 160 random bits (the system's CSPRNG).
    static func generate() -> TOTPSecret {
        var generator = SystemRandomNumberGenerator()
        return TOTPSecret(text: String((0..<32).map { _ in Self.alphabet[Int.random(in: 0..<32, using: &generator)] }))
    }

    /// The secret ``sealed(with:context:)`` sealed with the master key under `context`.
    init(sealed: String, context: String, masterKey: MasterKey) throws {
        self.init(text: String(decoding: try masterKey.open(sealed, context: context), as: UTF8.self))
    }

    /// The form it is stored in: sealed with the master key under `context`.
    func sealed(with masterKey: MasterKey, context: String) throws -> String {
        try masterKey.seal(Data(self.text.utf8), context: context)
    }

    /// Never the secret.
    var description: String { "TOTPSecret(redacted)" }

    /// What an authenticator app takes: RFC 4648 base32 of the key, upper case, without padding.
    var base32: String { String(base32Encoding: Array(self.text.utf8), options: .omitPaddingCharacter) }

    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…` (Google Authenticator's key URI format).
    func uri(issuer: String, account: String) -> String {
        TOTP(secret: self.text).createAuthenticatorURL(label: "\(issuer):\(account)", issuer: issuer)
    }

    /// The time step `date` falls in.
    static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Self.step).rounded(.down)) }

    /// The code of `step` (6 digits unless the RFC's 8-digit vectors ask), with its leading zeros.
    func code(step: Int64, digits: Int = Self.digits) -> String {
        let value = TOTP(secret: self.text, length: digits).compute(date: Date(timeIntervalSince1970: TimeInterval(step) * Self.step))
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The step, within ``skew`` of `date`'s, whose code `code` is; nil when none is. Every candidate is computed and
    /// compared in constant time, so the time taken does not say which step matched or whether one did.
    func matchingStep(_ code: String, at date: Date) -> Int64? {
        let presented = code.filter { !$0.isWhitespace }
        let now = Self.step(at: date)
        var matched: Int64?
        for step in (now - Self.skew)...(now + Self.skew) {
            if Secret.constantTimeEquals(self.code(step: step), presented) && matched == nil { matched = step }
        }
        return matched
    }
}
