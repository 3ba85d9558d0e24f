/// AWS's URI encoding, and the percent-decoding that undoes a URL's own.
///
/// AWS encodes every byte of the UTF-8 form except the unreserved `A-Z a-z 0-9 - _ . ~`, with uppercase hex digits.
/// Decoding works on bytes, so an escape that is not UTF-8 (`%FF`) survives the round trip unchanged; a `%` that
/// starts no valid escape stays a literal `%`. A `+` is a plus sign, never a space (RFC 3986, as `URLComponents`
/// reads a query).
package enum AWSURIEncoding {
    /// `text` with every byte but the unreserved ones percent-encoded (`/` too).
    package static func encode(_ text: some StringProtocol) -> String {
        if text.utf8.allSatisfy(Self.isUnreserved) { return String(text) }
        return self.encode(bytes: Array(text.utf8))
    }

    /// A path: every byte but the unreserved ones and `/` percent-encoded, as encoding each segment would.
    package static func encodePath(_ path: String) -> String {
        if path.utf8.allSatisfy({ Self.isUnreserved($0) || $0 == UInt8(ascii: "/") }) { return path }
        return self.encode(bytes: Array(path.utf8), keeping: UInt8(ascii: "/"))
    }

    /// `bytes` with every byte but the unreserved ones (and `kept`) percent-encoded.
    package static func encode(bytes: [UInt8], keeping kept: UInt8? = nil) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.count)
        for byte in bytes {
            if self.isUnreserved(byte) || byte == kept {
                encoded.append(byte)
            } else {
                encoded.append(UInt8(ascii: "%"))
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The bytes that `text` percent-encodes (`%41` → `A`); anything else, `+` included, is kept as it is.
    package static func decode(_ text: some StringProtocol) -> [UInt8] {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = self.hexValue(bytes[index + 1]),
                let low = self.hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    /// `text` decoded, then encoded the AWS way: how a URL's path segment or query part is canonicalised.
    package static func reencode(_ text: some StringProtocol) -> String {
        // Most segments and values are unreserved characters only: nothing to decode or encode.
        if text.utf8.allSatisfy(Self.isUnreserved) { return String(text) }
        return self.encode(bytes: self.decode(text))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
