import Testing

@testable import LatchkeySMTP

struct SMTPCapabilitiesTests {
    @Test func extensionsAndAuthMechanismsAreReadFromTheEHLOReply() {
        let reply = SMTPReply(code: 250, lines: ["mail.example.com greets you", "SIZE 35882577", "8BITMIME", "AUTH LOGIN plain XOAUTH2", "STARTTLS"])
        let capabilities = SMTPCapabilities(ehloReply: reply)
        #expect(capabilities.supportsStartTLS)
        #expect(capabilities.authenticationMechanisms == ["LOGIN", "PLAIN", "XOAUTH2"])
        #expect(capabilities.extensions.contains("SIZE"))
    }

    @Test func theObsoleteAuthEqualsFormCounts() {
        let capabilities = SMTPCapabilities(ehloReply: SMTPReply(code: 250, lines: ["mail.example.com", "AUTH=LOGIN"]))
        #expect(capabilities.authenticationMechanisms == ["LOGIN"])
        #expect(!capabilities.supportsStartTLS)
    }

    @Test func theGreetingLineIsNotAnExtension() {
        let capabilities = SMTPCapabilities(ehloReply: SMTPReply(code: 250, lines: ["STARTTLS.example.com"]))
        #expect(!capabilities.supportsStartTLS)
        #expect(capabilities.extensions.isEmpty)
    }
}
