import Foundation
import LatchkeyServer
import LatchkeyTestSupport

/// A live server whose email accounts mail through `SMTPPeer` (the aiosmtpd peer of LatchkeyTestSupport).
/// `servingEvents: true` runs the application `latchkey serve` runs, whose background services include the outbox
/// sender that delivers the mails. Hashing is cheap here (64 KiB, one pass): these tests are about the flows.
extension LiveServer {
    /// A live server; with `email`, email accounts on and mailing through the SMTP peer's plain port (and with
    /// `revealExisting`, `email.reveal-existing` on).
    static func start(email: Bool, revealExisting: Bool = false, _ body: @Sendable (LiveServer) async throws -> Void) async throws {
        let peer = email ? try await SMTPPeer.shared() : nil
        try await LiveServer.run(
            servingEvents: true,
            configure: { configuration in
                guard let peer else { return }
                configuration.email.smtpHost = "127.0.0.1"
                configuration.email.smtpPort = peer.ports.plain
                configuration.email.smtpTLS = "none"
                configuration.email.from = "no-reply@latchkey.test"
                configuration.email.pollInterval = 0.2
                configuration.email.smtpTimeout = 10
                configuration.email.argon2Memory = 64
                configuration.email.argon2Iterations = 1
                configuration.email.revealExisting = revealExisting
            }, body)
    }
}

/// The mails the SMTP peer received.
enum MailPeer {
    /// The code (a line of 6 digits) and link token (`?token=`) of the newest mail to `recipient`.
    static func latestMessage(to recipient: String) async throws -> (code: String, linkToken: String) {
        guard let delivered = try await SMTPPeer.shared().messages(to: recipient).last else {
            throw ProcessRunnerError("no mail to \(recipient) yet")
        }
        let parts = RenderedMessage(delivered.raw).parts()
        guard let text = parts.first(where: { $0.headers["content-type"]?.hasPrefix("text/plain") == true })?.decodedBody else {
            throw ProcessRunnerError("the mail to \(recipient) has no text part")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let code = lines.first(where: { $0.count == 6 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let token = text.firstMatch(of: /\?token=([A-Za-z0-9_-]+)/)?.output.1
        else { throw ProcessRunnerError("no code or link in the mail to \(recipient)") }
        return (code, String(token))
    }
}
