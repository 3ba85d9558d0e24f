#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Text in header fields: refusing what could inject a header, and RFC 2047 encoded-words for the rest.
enum HeaderText {
    /// Bytes of UTF-8 per encoded-word: 39 bytes are 52 base64 characters, a 64-character word, so even the first
    /// word after `Subject: ` stays within the recommended 78 columns.
    static let bytesPerEncodedWord = 39

    /// Refuses control characters (CR and LF above all) in text that goes into a header.
    static func validateUnstructured(_ text: String, field: String) throws {
        guard !text.unicodeScalars.contains(where: Self.isControl) else {
            throw MailMessageError(.invalidHeader, "the \(field) contains a line break or another control character")
        }
    }

    /// An unstructured field value (the subject): as it is when it is short printable ASCII, otherwise encoded-words
    /// folded onto continuation lines. `name` is the field name, counted into the first line's length.
    static func unstructured(_ text: String, name: String) -> String {
        if Self.isPlainASCII(text), name.count + 2 + text.count <= 78 { return text }
        return Self.encodedWords(text)
    }

    /// A display name: a quoted-string when it is short printable ASCII, otherwise encoded-words.
    static func phrase(_ text: String) -> String {
        if Self.isPlainASCII(text), text.count <= 60 {
            let escaped = text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        return Self.encodedWords(text)
    }

    /// `=?utf-8?B?...?=` words (RFC 2047 §4.1), each holding whole Unicode scalars, separated by folding whitespace.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > Self.bytesPerEncodedWord {
                words.append(Self.encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(Self.encodedWord(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?utf-8?B?\(Data(bytes).base64EncodedString())?="
    }

    /// Printable ASCII and spaces, without `=?` (which a reader would take for the start of an encoded-word).
    private static func isPlainASCII(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } && !text.contains("=?")
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }
}
