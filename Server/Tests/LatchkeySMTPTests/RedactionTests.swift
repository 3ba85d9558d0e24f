import NIOCore
import Testing

@testable import LatchkeySMTP

/// The password never shows: not in descriptions, dumps, commands or errors.
struct RedactionTests {
    static let password = "hunter2-very-secret"

    static let configuration = SMTPConfiguration(
        host: "smtp.example.com",
        tls: .startTLS,
        credentials: .init(username: "mailer", password: password)
    )

    @Test func theConfigurationsDescriptionsHideThePassword() {
        let credentials = Self.configuration.credentials!
        for text in [
            "\(Self.configuration)", String(reflecting: Self.configuration), "\(credentials)", String(reflecting: credentials),
        ] {
            #expect(!text.contains(Self.password), "\(text)")
        }
        #expect("\(Self.configuration)".contains("mailer"))
    }

    @Test func dumpHidesThePassword() {
        var configurationDump = ""
        dump(Self.configuration, to: &configurationDump)
        var credentialsDump = ""
        dump(Self.configuration.credentials, to: &credentialsDump)
        #expect(!configurationDump.contains(Self.password), "\(configurationDump)")
        #expect(!credentialsDump.contains(Self.password), "\(credentialsDump)")
        #expect(credentialsDump.contains("<redacted>"))
    }

    @Test func authCommandsHideTheirPayload() {
        #expect("\(SMTPCommand.authenticate(mechanism: "PLAIN", initialResponse: "AGFsaWNlAHNlY3JldA=="))" == "AUTH PLAIN <redacted>")
        #expect("\(SMTPCommand.authenticationResponse("c2VjcmV0"))" == "<redacted>")
        #expect("\(SMTPCommand.mailFrom(address: "a@example.com"))" == "MAIL FROM:<a@example.com>")
    }

    @Test func anErrorRedactsSecretsTheServerEchoes() {
        let reply = SMTPReply(code: 535, lines: ["5.7.8 bad credentials for AGFsaWNlAHNlY3JldA== (\(Self.password))"])
        let error = SMTPError(
            .authenticationFailed,
            stage: .authentication,
            detail: "the server answered 535",
            reply: reply,
            redacting: [Self.password, "AGFsaWNlAHNlY3JldA=="]
        )
        #expect(!"\(error)".contains(Self.password))
        #expect(!"\(error)".contains("AGFsaWNlAHNlY3JldA=="))
        #expect(error.replyText == "5.7.8 bad credentials for <redacted> (<redacted>)")
        #expect(error.kind == .permanent)
        #expect(error.replyCode == 535)
    }

    @Test func replyTextIsOneLineOfAtMost200Characters() {
        let reply = SMTPReply(code: 550, lines: ["first\u{1B}[31m", String(repeating: "x", count: 500)])
        let error = SMTPError(.rejected, stage: .recipient, detail: "refused", reply: reply)
        let text = error.replyText ?? ""
        #expect(text.count == 201)
        #expect(text.unicodeScalars.allSatisfy { $0.value >= 0x20 })
    }
}
