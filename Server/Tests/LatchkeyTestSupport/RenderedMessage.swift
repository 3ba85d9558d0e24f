import Foundation

/// A rendered message read back the simple way a test can: unfolded header fields, decoded encoded-words, MIME parts
/// and quoted-printable bodies. Enough to check the renderer and read the server's mails, not a general MIME parser.
public struct RenderedMessage: Sendable {
    public struct Part: Sendable {
        public var headers: [String: String]
        public var encodedBody: String
        public var decodedBody: String { QuotedPrintableDecoder.decode(self.encodedBody) }
    }

    public let raw: String
    /// Field name (lowercased) to unfolded value.
    public let headers: [String: String]
    public let body: String

    public init(_ raw: String) {
        self.raw = raw
        let split = raw.range(of: "\r\n\r\n")!
        self.headers = Self.fields(String(raw[..<split.lowerBound]))
        self.body = String(raw[split.upperBound...])
    }

    /// The parts of a multipart body, between `--boundary` lines.
    public func parts() -> [Part] {
        guard let boundary = self.headers["content-type"]?.components(separatedBy: "boundary=\"").last?.dropLast() else { return [] }
        let sections = self.body.components(separatedBy: "--\(boundary)")
        return sections.dropFirst().dropLast().map { section in
            let content = String(section.unicodeScalars.dropFirst(2))  // the CRLF after the boundary line
            let split = content.range(of: "\r\n\r\n")!
            // The CRLF before the next boundary belongs to the delimiter.
            return Part(
                headers: Self.fields(String(content[..<split.lowerBound])),
                encodedBody: String(content[split.upperBound...].unicodeScalars.dropLast(2))
            )
        }
    }

    public static func fields(_ section: String) -> [String: String] {
        let unfolded = section.replacingOccurrences(of: "\r\n ", with: " ").replacingOccurrences(of: "\r\n\t", with: "\t")
        var fields: [String: String] = [:]
        for line in unfolded.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}

public enum QuotedPrintableDecoder {
    public static func decode(_ text: String) -> String {
        var bytes: [UInt8] = []
        let input = Array(text.utf8)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "="), index + 2 < input.count {
                let pair = input[index + 1...index + 2]
                if pair.elementsEqual([UInt8(ascii: "\r"), UInt8(ascii: "\n")]) {
                    index += 3
                    continue
                }
                if let value = UInt8(String(decoding: pair, as: UTF8.self), radix: 16) {
                    bytes.append(value)
                    index += 3
                    continue
                }
            }
            bytes.append(byte)
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

public enum EncodedWordDecoder {
    /// Decodes `=?utf-8?B?...?=` words, dropping the whitespace between adjacent words (RFC 2047 §6.2).
    public static func decode(_ text: String) -> String {
        let pattern = /=\?utf-8\?B\?([A-Za-z0-9+\/=]*)\?=/
        var output = ""
        var rest = Substring(text)
        var previousWasWord = false
        while let match = rest.firstMatch(of: pattern) {
            let between = rest[..<match.range.lowerBound]
            if !(previousWasWord && between.allSatisfy(\.isWhitespace)) { output += between }
            output += String(decoding: Data(base64Encoded: String(match.output.1)) ?? Data(), as: UTF8.self)
            rest = rest[match.range.upperBound...]
            previousWasWord = true
        }
        return output + rest
    }
}
