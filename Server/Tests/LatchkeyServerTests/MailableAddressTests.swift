import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeySMTP
import Testing

// `@testable`: the address parser itself, beside the SMTP client's rule.
@testable import LatchkeyServer

/// One rule for addresses: registration refuses exactly what the SMTP client would refuse to mail, so no account is
/// made whose mail could never be sent.
struct MailableAddressTests {
    /// Well-formed RFC 5322 addresses that the SMTP client refuses (a space or angle bracket between the quotes).
    static let unmailable = [
        #""ann lee"@example.test"#, #""ann<lee>"@example.test"#, #""ann\ lee"@example.test"#, "\"ann\\\tlee\"@example.test",
        #""<ann@evil.test>"@example.test"#,
    ]

    @Test(arguments: unmailable)
    func anAddressTheSMTPClientWouldRefuseIsRefusedAtRegistrationAndCreatesNothing(address: String) async throws {
        let port = try await unusedPort()
        let configure: (inout LatchkeyConfiguration) -> Void = { configuration in
            configuration.useMailRelay(port: port)  // nothing is mailed
            configuration.accountLimits.email.limit = 0
        }
        try await withServer(.live, configure: configure) { client, server in
            let refused = try await client.register(address, "correct horse battery")
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .invalidEmail)
            #expect(refused.envelope?.error.message.contains("cannot be mailed") == true)
            #expect(try await server.services.store.outbox(limit: 10, pendingOnly: false).isEmpty)
        }
    }

    @Test func everyAddressTheParserAcceptsTheSMTPClientTakes() throws {
        let mailable = [
            "ann@example.test", "Ann.Lee+tag@BÜCHER.example", #""ann.lee"@example.test"#, #""ann@lee"@example.test"#,
            #""ann\"lee"@example.test"#, "a!#$%&'*+-/=?^_`{|}~@example.test",
        ]
        for text in mailable {
            let address = try EmailAddress(parsing: text)
            #expect(throws: Never.self, "\(text)") { try MailAddress(address.address) }
        }
        for text in Self.unmailable {
            #expect(throws: EmailAddress.Invalid.self, "\(text)") { try EmailAddress(parsing: text) }
            #expect(throws: MailMessageError.self, "\(text)") { try MailAddress(text) }
        }
    }
}
