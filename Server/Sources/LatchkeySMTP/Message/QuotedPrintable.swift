/// Quoted-printable (RFC 2045 §6.7): 8-bit text as 7-bit lines of at most 76 characters.
enum QuotedPrintable {
    /// Characters per encoded line before the soft line break's `=`.
    static let maximumLineLength = 75

    /// Encodes `text` as UTF-8. Its line breaks (CRLF, LF or a lone CR) become CRLF hard line breaks; longer lines get
    /// soft line breaks (`=` CRLF). A line starting with `From ` gets its `F` encoded, so mailbox files cannot mangle it.
    static func encode(_ text: String) -> String {
        Self.lines(of: text).map(Self.encodeLine).joined(separator: "\r\n")
    }

    /// The lines of `text`, split at CRLF, LF or a lone CR.
    static func lines(of text: String) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        var previousWasCR = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\n") && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                lines.append(current)
                current = []
            } else {
                current.append(byte)
            }
        }
        lines.append(current)
        return lines
    }

    private static func encodeLine(_ line: [UInt8]) -> String {
        let startsWithFrom = line.starts(with: Array("From ".utf8))
        var tokens: [String] = []
        for (index, byte) in line.enumerated() {
            let isLast = index == line.count - 1
            let isWhitespace = byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
            let isLiteral = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || (isWhitespace && !isLast)
            tokens.append(isLiteral && !(index == 0 && startsWithFrom) ? String(UnicodeScalar(byte)) : Self.escape(byte))
        }
        return Self.wrap(tokens)
    }

    /// Joins tokens into lines of at most 76 characters with soft line breaks, never leaving a space or tab at the end
    /// of an encoded line (a decoder strips those).
    private static func wrap(_ tokens: [String]) -> String {
        var output = ""
        var lineLength = 0
        for token in tokens {
            if lineLength + token.count > Self.maximumLineLength {
                if let last = output.last, last == " " || last == "\t" {
                    output.removeLast()
                    lineLength -= 1
                    if lineLength + 3 > Self.maximumLineLength {
                        output += "=\r\n"
                        lineLength = 0
                    }
                    output += Self.escape(last == " " ? UInt8(ascii: " ") : UInt8(ascii: "\t"))
                }
                output += "=\r\n"
                lineLength = 0
            }
            output += token
            lineLength += token.count
        }
        return output
    }

    private static func escape(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [UInt8(ascii: "="), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }
}
