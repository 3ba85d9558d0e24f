import Foundation
import LatchkeySMTP
import LatchkeyTestSupport
import Testing

extension SMTPPeer {
    /// A configuration for one of the peer's ports, trusting the peer's CA, authenticating unless `credentials` is
    /// `.none`.
    func configuration(
        port: KeyPath<Ports, Int>,
        tls: SMTPConfiguration.TLSMode,
        host: String? = nil,
        credentials: SMTPConfiguration.Credentials?? = .none,
        trustRoots: SMTPConfiguration.TrustRoots? = nil,
        commandTimeout: Duration = .seconds(10),
        totalTimeout: Duration = .seconds(30)
    ) throws -> SMTPConfiguration {
        let defaultCredentials = tls == .none ? nil : SMTPConfiguration.Credentials(username: self.username, password: self.password)
        return SMTPConfiguration(
            host: host ?? self.host,
            port: self.ports[keyPath: port],
            tls: tls,
            credentials: credentials ?? defaultCredentials,
            heloName: "client.latchkey.test",
            trustRoots: try trustRoots ?? .certificateAuthorities(pem: self.caCertificatePEM),
            commandTimeout: commandTimeout,
            totalTimeout: totalTimeout
        )
    }

    static func message(to recipients: [String], text: String = "Your code is 123456.\n") throws -> MailMessage {
        try MailMessage(
            from: MailAddress("no-reply@auth.latchkey.test", displayName: "Latchkey"),
            to: recipients.map { try MailAddress($0) },
            subject: "Ihr Anmeldecode — 123456",
            textBody: text,
            htmlBody: "<p>Your code is <b>123456</b>.</p>",
            date: Date(),
            extraHeaders: [MailHeader("Auto-Submitted", "auto-generated")]
        )
    }

    /// The ``SMTPError`` that sending `message` with `configuration` throws; records an issue when it succeeds.
    static func failure(sending message: MailMessage, with configuration: SMTPConfiguration) async throws -> SMTPError? {
        let client = try SMTPClient(configuration: configuration)
        do {
            try await client.send(message)
            Issue.record("the delivery succeeded")
            return nil
        } catch let error as SMTPError {
            return error
        }
    }
}
