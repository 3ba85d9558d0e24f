import Foundation
import LatchkeySMTP
import LatchkeyTestSupport
import Testing

/// Deliveries to the aiosmtpd peer, read back through its HTTP API.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SMTPDeliveryTests {
    func deliver(port: KeyPath<SMTPPeer.Ports, Int>, tls: SMTPConfiguration.TLSMode, host: String? = nil) async throws -> DeliveredMessage {
        let peer = try await SMTPPeer.shared()
        let recipient = SMTPPeer.recipient()
        let message = try SMTPPeer.message(to: [recipient])
        try await SMTPClient(configuration: peer.configuration(port: port, tls: tls, host: host)).send(message)
        let delivered = try await peer.messages(to: recipient, wait: .seconds(5))
        try #require(delivered.count == 1)
        #expect(delivered[0].raw.contains("Message-ID: <\(message.messageID)>"))
        #expect(delivered[0].mailFrom == "no-reply@auth.latchkey.test")
        #expect(delivered[0].helo == "client.latchkey.test")
        return delivered[0]
    }

    @Test func aPlainDeliveryArrivesWithoutTLSOrAuth() async throws {
        let delivered = try await self.deliver(port: \.plain, tls: .none)
        #expect(!delivered.tls)
        #expect(delivered.authentication == nil)
    }

    @Test func aServerThatRefusesEHLOIsGreetedWithHELO() async throws {
        let delivered = try await self.deliver(port: \.heloOnly, tls: .none)
        #expect(delivered.port == "helo_only")
    }

    @Test func startTLSWithAuthPlainIsPreferred() async throws {
        let delivered = try await self.deliver(port: \.starttls, tls: .startTLS, host: "localhost")
        #expect(delivered.tls)
        #expect(delivered.authentication?.mechanism == "PLAIN")
        #expect(delivered.authentication?.username == "latchkey-test")
    }

    @Test func startTLSWithAuthLoginWhenOnlyLoginIsOffered() async throws {
        let delivered = try await self.deliver(port: \.starttlsLogin, tls: .startTLS, host: "localhost")
        #expect(delivered.tls)
        #expect(delivered.authentication?.mechanism == "LOGIN")
    }

    @Test func implicitTLSVerifiesAnIPAddressAgainstTheCertificate() async throws {
        let delivered = try await self.deliver(port: \.implicitTLS, tls: .implicit, host: "127.0.0.1")
        #expect(delivered.tls)
        #expect(delivered.authentication?.mechanism == "PLAIN")
    }

    @Test func theMessageArrivesIntactWithDotLinesAndEveryRecipient() async throws {
        let peer = try await SMTPPeer.shared()
        let recipients = [SMTPPeer.recipient(), SMTPPeer.recipient()]
        let text = "Line one\n.leading dot\n..two dots\n.\nGrüße 🔐 \(String(repeating: "long ", count: 40))\n"
        let message = try SMTPPeer.message(to: recipients, text: text)
        try await SMTPClient(configuration: peer.configuration(port: \.starttls, tls: .startTLS, host: "localhost")).send(message)
        let delivered = try #require(try await peer.messages(to: recipients[1], wait: .seconds(5)).first)
        #expect(Set(delivered.recipients) == Set(recipients))
        // The peer undoes the dot-stuffing: the lines starting with dots arrive as they were written.
        let rendered = RenderedMessage(delivered.raw)
        #expect(rendered.parts().first?.decodedBody == text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(EncodedWordDecoder.decode(rendered.headers["subject"] ?? "") == "Ihr Anmeldecode — 123456")
        #expect(rendered.headers["auto-submitted"] == "auto-generated")
    }
}
