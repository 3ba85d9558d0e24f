import Crypto
import Foundation

/// What an authenticator app does with the key a server shows: RFC 6238 (HMAC-SHA-1, 6 digits, 30-second steps),
/// written here apart from the server's ``TOTPSecret`` so the tests check it against an independent implementation.
struct AuthenticatorApp {
    /// The key as shown: RFC 4648 base32, without padding.
    let secret: String

    /// The code the app shows at `date`.
    func code(at date: Date) -> String {
        var counter = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: Self.base32Decoded(self.secret))))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let truncated = mac[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7fff_ffff
        let text = String(truncated % 1_000_000)
        return String(repeating: "0", count: 6 - text.count) + text
    }

    static func base32Decoded(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var (buffer, bits, bytes) = (0, 0, [UInt8]())
        for character in text.uppercased() {
            guard let value = alphabet.firstIndex(of: character) else { continue }
            buffer = (buffer << 5 | value) & 0xffff
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return bytes
    }
}
