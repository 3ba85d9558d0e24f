import Crypto
import Foundation

/// An authenticator app of the tests' own: RFC 6238 TOTP (HMAC-SHA-1, 30-second steps, 6 digits) over a secret read
/// from RFC 4648 base32, written apart from the server's code so that a test checks the server against the RFC rather
/// than against itself.
struct TOTPGenerator: Sendable {
    static let period: TimeInterval = 30

    let key: [UInt8]

    /// The generator of a `secret` as the enrolment answer shows it (base32, any case, padding optional).
    init(secret: String) throws {
        guard let key = Base32.decode(secret) else { throw TestFailure("the secret is not RFC 4648 base32") }
        self.key = key
    }

    /// The time step of `date` (RFC 6238 §4.2: T = floor((now - T0) / X), T0 = 0, X = 30).
    static func step(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Self.period).rounded(.down)) }

    /// The 6-digit code of `step` (RFC 4226 §5.3's dynamic truncation), zero-padded.
    func code(step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: self.key)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let code = String(binary % 1_000_000)
        return String(repeating: "0", count: 6 - code.count) + code
    }

    /// The code an app shows at `date`, or `steps` steps later (negative: earlier).
    func code(at date: Date, steps: Int64 = 0) -> String { self.code(step: Self.step(of: date) + steps) }

    /// Six digits that are the code of no step within two of `date`'s: a wrong code however much skew is allowed.
    func wrongCode(at date: Date) -> String {
        let near = Set((-2...2).map { self.code(at: date, steps: Int64($0)) })
        return (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { !near.contains($0) }!
    }
}

/// RFC 4648 base32 (the alphabet `A-Z2-7`).
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// The bytes of `text` (upper or lower case, `=` padding optional); nil for any other character.
    static func decode(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.uppercased() where character != "=" {
            guard let value = Self.alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> UInt32(bits)) & 0xff))
            }
        }
        return bytes
    }

    /// Whether `text` is made of the alphabet's characters only.
    static func isBase32(_ text: some StringProtocol) -> Bool { !text.isEmpty && text.allSatisfy { Self.alphabet.contains($0) } }
}
