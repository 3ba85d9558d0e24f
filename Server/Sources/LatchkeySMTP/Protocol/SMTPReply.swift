/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and the text of each of its lines.
struct SMTPReply: Sendable, Hashable {
    /// The reply code, 200...599.
    var code: Int
    /// The text after `250-` / `250 ` on each line, in order; an empty string for a bare `250`.
    var lines: [String]

    /// 2xx: the command succeeded.
    var isPositiveCompletion: Bool { (200..<300).contains(self.code) }

    /// The lines joined by spaces, for messages.
    var text: String { self.lines.joined(separator: " ") }
}
