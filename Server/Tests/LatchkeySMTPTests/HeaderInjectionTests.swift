import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeySMTP

/// No value can smuggle a line break into the header section or angle brackets into the envelope.
struct HeaderInjectionTests {
    static let injections = ["x\r\nBcc: victim@example.com", "x\nBcc: victim@example.com", "x\rBcc: victim@example.com", "x\0y"]

    static func message(subject: String = "Hi", extraHeaders: [MailHeader] = [], messageID: String? = nil) throws -> MailMessage {
        try MailMessage(
            from: MailAddress("from@example.com"),
            to: [MailAddress("to@example.com")],
            subject: subject,
            textBody: "body",
            date: Date(timeIntervalSince1970: 0),
            messageID: messageID,
            extraHeaders: extraHeaders
        )
    }

    @Test(arguments: injections)
    func aSubjectWithALineBreakIsRefused(subject: String) {
        #expect(throws: MailMessageError.self) { try Self.message(subject: subject) }
        #expect((try? Self.message(subject: subject)) == nil)
    }

    @Test(arguments: injections)
    func aDisplayNameWithALineBreakIsRefused(name: String) {
        #expect(throws: MailMessageError.self) { try MailAddress("a@example.com", displayName: name) }
    }

    @Test(arguments: injections + ["a@example.com>\r\nRCPT TO:<b@example.com", "<a@example.com>", "a b@example.com", "", "zoë@example.com"])
    func anAddressThatCouldBreakTheEnvelopeIsRefused(address: String) {
        do {
            _ = try MailAddress(address)
            Issue.record("\(address.debugDescription) was accepted")
        } catch let error as MailMessageError {
            #expect(error.code == .invalidAddress)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(arguments: injections + [String(repeating: "x", count: 901), "Grüße"])
    func anExtraHeaderValueThatIsNotOneASCIILineIsRefused(value: String) {
        #expect(throws: MailMessageError.self) { try MailHeader("X-Test", value) }
    }

    @Test(arguments: ["Bcc", "content-type", "From", "X Test", "X:Test", "", "X-Tëst"])
    func aReservedOrMalformedHeaderNameIsRefused(name: String) {
        #expect(throws: MailMessageError.self) { try MailHeader(name, "value") }
    }

    @Test(arguments: ["a>b", "a<b", "a b", "a\r\nb", ""])
    func aMessageIDThatCouldBreakItsHeaderIsRefused(messageID: String) {
        #expect(throws: MailMessageError.self) { try Self.message(messageID: messageID) }
    }

    @Test func aMessageWithoutRecipientsIsRefused() {
        #expect(throws: MailMessageError.self) {
            try MailMessage(from: MailAddress("a@example.com"), to: [], subject: "s", textBody: "b", date: Date())
        }
    }

    @Test func theErrorDoesNotEchoTheInjectedText() {
        do {
            _ = try Self.message(subject: "x\r\nBcc: victim@example.com")
        } catch {
            #expect(!"\(error)".contains("victim"))
            #expect((error as? MailMessageError)?.code == .invalidHeader)
        }
    }

    @Test func aBodyMayContainAnythingAndStillCannotAddHeaders() throws {
        let message = try MailMessage(
            from: MailAddress("a@example.com"),
            to: [MailAddress("b@example.com")],
            subject: "s",
            textBody: "line\r\n\r\nBcc: victim@example.com\r\n.\r\n",
            date: Date()
        )
        let rendered = RenderedMessage(message.rendered())
        #expect(rendered.headers["bcc"] == nil)
    }
}
