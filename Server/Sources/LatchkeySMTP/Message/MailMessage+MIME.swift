/// Rendering a ``MailMessage`` as an RFC 5322 message with MIME (RFC 2045, 2046) bodies.
extension MailMessage {
    /// The whole message, header section and body, with CRLF line breaks and no line longer than 78 characters
    /// except header lines holding long addresses (never more than 998 octets); 7-bit ASCII throughout.
    ///
    /// Both bodies are quoted-printable `charset=utf-8`. With an HTML body the message is `multipart/alternative`
    /// (plain text first, so clients prefer the HTML) under a random boundary that occurs nowhere in the parts.
    public func rendered() -> String {
        let text = MIMEPart(contentType: "text/plain; charset=utf-8", body: QuotedPrintable.encode(self.textBody))
        guard let htmlBody = self.htmlBody else {
            return (self.headerLines() + text.headerLines).joined(separator: "\r\n") + "\r\n\r\n" + text.body + "\r\n"
        }
        let parts = [text, MIMEPart(contentType: "text/html; charset=utf-8", body: QuotedPrintable.encode(htmlBody))]
        let boundary = Self.boundary(avoiding: parts)
        var lines = self.headerLines()
        lines.append("Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"")
        lines.append("")
        for part in parts {
            lines.append("--\(boundary)")
            lines += part.headerLines
            lines.append("")
            lines.append(part.body)
        }
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The fields every message has, then the extra ones; without `Content-Type` (and its transfer encoding).
    private func headerLines() -> [String] {
        var lines = [
            "From: \(self.from.headerValue)",
            "To: " + self.to.map(\.headerValue).joined(separator: ",\r\n "),
            "Subject: " + HeaderText.unstructured(self.subject, name: "Subject"),
            "Date: " + MailDate.format(self.date),
            "Message-ID: <\(self.messageID)>",
            "MIME-Version: 1.0",
        ]
        lines += self.extraHeaders.map { "\($0.name): \($0.value)" }
        return lines
    }

    /// `=_` cannot occur in quoted-printable text (`=` is always followed by hex digits or a line break); the check
    /// below makes the guarantee independent of the encoding.
    private static func boundary(avoiding parts: [MIMEPart]) -> String {
        while true {
            let boundary = "=_latchkey_\(RandomToken.hex(bytes: 16))"
            if !parts.contains(where: { $0.body.contains(boundary) }) { return boundary }
        }
    }
}

/// One body part: its content type and its quoted-printable text.
struct MIMEPart {
    var contentType: String
    var body: String

    var headerLines: [String] {
        ["Content-Type: \(self.contentType)", "Content-Transfer-Encoding: quoted-printable"]
    }
}
