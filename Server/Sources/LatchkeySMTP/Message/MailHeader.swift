/// An extra header field of a ``MailMessage``, such as `Auto-Submitted: auto-generated` (RFC 3834).
///
/// The fields the renderer writes itself (`From`, `To`, `Subject`, `Date`, `Message-ID`, `MIME-Version`,
/// `Content-Type`, `Content-Transfer-Encoding`) cannot be given here.
public struct MailHeader: Sendable, Hashable {
    /// The field name, printable ASCII without a colon.
    public let name: String
    /// The field value: printable ASCII, spaces and tabs, at most 900 characters, never a line break.
    public let value: String

    /// The fields the renderer owns, lowercased.
    static let reservedNames: Set<String> = [
        "from", "to", "cc", "bcc", "subject", "date", "message-id", "mime-version", "content-type", "content-transfer-encoding",
    ]

    /// Makes a header field; throws ``MailMessageError`` (``MailMessageError/Code/invalidHeader``) for a malformed or
    /// reserved name, or a value with a line break, control or non-ASCII character.
    public init(_ name: String, _ value: String) throws {
        guard !name.isEmpty, name.count <= 76, name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != ":" }) else {
            throw MailMessageError(.invalidHeader, "a header name must be printable ASCII without spaces or ':'")
        }
        guard !Self.reservedNames.contains(name.lowercased()) else {
            throw MailMessageError(.invalidHeader, "the header \(name) is written by the message itself")
        }
        guard value.count <= 900, value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value < 0x7F) }) else {
            throw MailMessageError(.invalidHeader, "the value of \(name) must be printable ASCII on one line, at most 900 characters")
        }
        self.name = name
        self.value = value
    }
}
