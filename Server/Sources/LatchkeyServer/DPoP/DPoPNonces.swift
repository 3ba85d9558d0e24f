import Crypto
import Foundation

/// The server nonces DPoP proofs must carry (RFC 9449 §8), so a proof cannot be made ahead of time.
///
/// Stateless, so every process on one database agrees: a nonce is a period number and its HMAC under a key derived
/// from the master key. One is valid in the period it was issued and the next (30 to 60 minutes), long enough that
/// the nonce an app got with its last tokens still works for its next refresh.
struct DPoPNonces: Sendable {
    let key: SymmetricKey
    static let period: TimeInterval = 1800
    /// The longest a nonce is accepted after it was handed out.
    static let lifetime: TimeInterval = 2 * period

    /// The nonce to hand out now.
    func current(now: Date) -> String { self.nonce(period: Self.period(of: now)) }

    /// Whether `nonce` was handed out in this period or the previous one.
    func isValid(_ nonce: String, now: Date) -> Bool {
        let period = Self.period(of: now)
        return [period, period - 1].contains { Secret.constantTimeEquals(self.nonce(period: $0), nonce) }
    }

    private func nonce(period: Int64) -> String {
        var bytes = Data(count: 8)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: period.bigEndian, as: Int64.self) }
        let mac = HMAC<SHA256>.authenticationCode(for: bytes, using: self.key)
        return (bytes + Data(mac).prefix(16)).base64URLEncodedString()
    }

    private static func period(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Self.period).rounded(.down)) }
}
