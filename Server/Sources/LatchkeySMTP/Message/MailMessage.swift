#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An email with a plain-text body and an optional HTML alternative, ready for ``SMTPClient/send(_:)``.
///
/// Every value is checked when the message is made, so an existing message always renders to a well-formed
/// RFC 5322 / MIME message: no header value can contain a line break. The envelope is taken from the message:
/// `MAIL FROM` is ``from``, `RCPT TO` each of ``to``.
///
/// ```swift
/// let message = try MailMessage(
///     from: MailAddress("no-reply@example.com", displayName: "Latchkey"),
///     to: [MailAddress("user@example.org")],
///     subject: "Your sign-in code",
///     textBody: "Your code is 123456.",
///     htmlBody: "<p>Your code is <b>123456</b>.</p>",
///     date: clock.now(),
///     extraHeaders: [MailHeader("Auto-Submitted", "auto-generated")])
/// ```
public struct MailMessage: Sendable {
    /// The author, also the envelope sender (`MAIL FROM`).
    public let from: MailAddress
    /// The recipients, each also an envelope recipient (`RCPT TO`); never empty.
    public let to: [MailAddress]
    /// The subject; non-ASCII text is written as RFC 2047 encoded-words.
    public let subject: String
    /// The `text/plain` body.
    public let textBody: String
    /// The `text/html` alternative; with it the message is `multipart/alternative`.
    public let htmlBody: String?
    /// The `Date` header's time (pass the time from the server's clock).
    public let date: Date
    /// The `Message-ID` without angle brackets (`random@domain-of-from`). It stays the same across retries, so a
    /// receiver can recognise a message delivered twice.
    public let messageID: String
    /// Further header fields, written in order after the standard ones.
    public let extraHeaders: [MailHeader]

    /// Makes a message; throws ``MailMessageError`` when it has no recipient or the subject, message ID or a header
    /// contains a line break or another control character.
    ///
    /// - Parameter messageID: The `Message-ID` without angle brackets; a random one in the sender's domain when nil.
    public init(
        from: MailAddress,
        to: [MailAddress],
        subject: String,
        textBody: String,
        htmlBody: String? = nil,
        date: Date,
        messageID: String? = nil,
        extraHeaders: [MailHeader] = []
    ) throws {
        guard !to.isEmpty else { throw MailMessageError(.noRecipients, "a message needs at least one recipient") }
        try HeaderText.validateUnstructured(subject, field: "subject")
        if let messageID {
            guard !messageID.isEmpty, messageID.count <= 200,
                messageID.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" })
            else {
                throw MailMessageError(.invalidHeader, "a message ID must be printable ASCII without spaces, '<' or '>'")
            }
        }
        self.from = from
        self.to = to
        self.subject = subject
        self.textBody = textBody
        self.htmlBody = htmlBody
        self.date = date
        self.messageID = messageID ?? "\(RandomToken.hex(bytes: 16))@\(from.domain ?? "localhost")"
        self.extraHeaders = extraHeaders
    }
}

/// Random hexadecimal text for message IDs and MIME boundaries.
enum RandomToken {
    static func hex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}
