import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeySMTP

/// The rendered message, read back: headers, encoded-words, MIME structure, quoted-printable bodies, line lengths.
struct MIMERenderingTests {
    static func message(
        subject: String = "Your sign-in code",
        text: String = "Your code is 123456.\n",
        html: String? = "<p>Your code is <b>123456</b>.</p>\n",
        extraHeaders: [MailHeader] = []
    ) throws -> MailMessage {
        try MailMessage(
            from: MailAddress("no-reply@auth.example.com", displayName: "Latchkey"),
            to: [MailAddress("user@example.org", displayName: "Zoë Müller"), MailAddress("second@example.org")],
            subject: subject,
            textBody: text,
            htmlBody: html,
            date: Date(timeIntervalSince1970: 1_751_373_296),
            extraHeaders: extraHeaders
        )
    }

    @Test func theStandardHeadersAreWritten() throws {
        let message = try Self.message(extraHeaders: [MailHeader("Auto-Submitted", "auto-generated")])
        let rendered = RenderedMessage(message.rendered())
        #expect(rendered.headers["from"] == "\"Latchkey\" <no-reply@auth.example.com>")
        #expect(rendered.headers["subject"] == "Your sign-in code")
        #expect(rendered.headers["date"] == "Tue, 01 Jul 2025 12:34:56 +0000")
        #expect(rendered.headers["mime-version"] == "1.0")
        #expect(rendered.headers["auto-submitted"] == "auto-generated")
        #expect(rendered.headers["message-id"] == "<\(message.messageID)>")
        #expect(EncodedWordDecoder.decode(rendered.headers["to"] ?? "") == "Zoë Müller <user@example.org>, <second@example.org>")
    }

    @Test func theMessageIDIsRandomInTheSendersDomain() throws {
        let first = try Self.message().messageID
        let second = try Self.message().messageID
        #expect(first != second)
        #expect(first.hasSuffix("@auth.example.com"))
        #expect(first.count == 32 + "@auth.example.com".count)
    }

    @Test func aNonASCIISubjectIsEncodedAsFoldedEncodedWords() throws {
        let subject = "Ihr Anmeldecode für Latchkey — gültig zehn Minuten, bitte nicht weitergeben 🔐"
        let rendered = RenderedMessage(try Self.message(subject: subject).rendered())
        let header = try #require(rendered.headers["subject"])
        #expect(header.hasPrefix("=?utf-8?B?"))
        #expect(EncodedWordDecoder.decode(header) == subject)
        // Folded: several words, each within RFC 2047's 75 characters.
        let words = header.split(separator: " ")
        #expect(words.count > 1)
        #expect(words.allSatisfy { $0.count <= 75 })
    }

    @Test func aSubjectThatLooksEncodedIsEncoded() throws {
        let rendered = RenderedMessage(try Self.message(subject: "=?utf-8?B?Zm9v?=").rendered())
        #expect(EncodedWordDecoder.decode(rendered.headers["subject"] ?? "") == "=?utf-8?B?Zm9v?=")
    }

    @Test func theBodyIsMultipartAlternativeWithTextThenHTMLInQuotedPrintable() throws {
        let text = "Grüße!\nYour code is 123456.\n.a line with a leading dot\n"
        let html = "<p>Grüße! Your code is <b>123456</b>.</p>"
        let rendered = RenderedMessage(try Self.message(text: text, html: html).rendered())
        #expect(rendered.headers["content-type"]?.hasPrefix("multipart/alternative; boundary=\"") == true)
        let parts = rendered.parts()
        try #require(parts.count == 2)
        #expect(parts[0].headers["content-type"] == "text/plain; charset=utf-8")
        #expect(parts[1].headers["content-type"] == "text/html; charset=utf-8")
        #expect(parts.allSatisfy { $0.headers["content-transfer-encoding"] == "quoted-printable" })
        #expect(parts[0].decodedBody == text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(parts[1].decodedBody == html)
        #expect(rendered.raw.hasSuffix("--\r\n"))
    }

    @Test func withoutHTMLTheMessageIsASingleTextPart() throws {
        let rendered = RenderedMessage(try Self.message(text: "Just text", html: nil).rendered())
        #expect(rendered.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(rendered.headers["content-transfer-encoding"] == "quoted-printable")
        #expect(QuotedPrintableDecoder.decode(rendered.body) == "Just text\r\n")
    }

    @Test func everyLineIsSevenBitEndsInCRLFAndStaysShort() throws {
        let long = String(
            repeating: "ä long line with ümlauts and a very long URL https://example.com/\(String(repeating: "x", count: 300)) ",
            count: 20
        )
        let raw = try Self.message(subject: long, text: long, html: long).rendered()
        #expect(raw.utf8.allSatisfy { $0 < 0x80 })
        let bytes = Array(raw.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            #expect(index > 0 && bytes[index - 1] == UInt8(ascii: "\r"), "bare LF at \(index)")
        }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\r") {
            #expect(index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n"), "bare CR at \(index)")
        }
        let lines = raw.components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.utf8.count <= 78 }, "\(lines.filter { $0.utf8.count > 78 })")
    }

    @Test func theBoundaryOccursInNoPart() throws {
        let message = try Self.message(text: "--=_latchkey_ in the text", html: "=_latchkey_")
        let rendered = RenderedMessage(message.rendered())
        let boundary = try #require(rendered.headers["content-type"]?.components(separatedBy: "boundary=\"").last?.dropLast())
        #expect(rendered.parts().allSatisfy { !$0.encodedBody.contains(boundary) })
        #expect(rendered.raw.components(separatedBy: "--\(boundary)").count == 4)
    }

    @Test(arguments: [
        (1_751_373_296, "Tue, 01 Jul 2025 12:34:56 +0000"),
        (1_709_251_199, "Thu, 29 Feb 2024 23:59:59 +0000"),
        (0, "Thu, 01 Jan 1970 00:00:00 +0000"),
        (-1, "Wed, 31 Dec 1969 23:59:59 +0000"),
    ])
    func theDateIsRFC5322InUTC(seconds: Int, expected: String) {
        #expect(MailDate.format(Date(timeIntervalSince1970: TimeInterval(seconds))) == expected)
    }

    @Test func displayNamesAreQuotedOrEncoded() throws {
        #expect(try MailAddress("a@example.com", displayName: "Say \"hi\" \\ there").headerValue == "\"Say \\\"hi\\\" \\\\ there\" <a@example.com>")
        #expect(try MailAddress("a@example.com").headerValue == "<a@example.com>")
        let encoded = try MailAddress("a@example.com", displayName: "Zoë").headerValue
        #expect(encoded == "=?utf-8?B?Wm/Dqw==?= <a@example.com>")
    }
}
