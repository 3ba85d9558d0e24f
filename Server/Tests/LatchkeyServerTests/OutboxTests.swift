import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The outbox: a mail is committed with the account, then delivered, retried while the relay fails for now, and given
/// up when it refuses for good.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct OutboxTests {
    static let password = "correct horse battery staple"

    @Test func aRelayThatIsDownLosesNoMail() async throws {
        let peer = try await SMTPPeer.shared()
        let port = try await unusedPort()
        let server = try await TestServer.make { $0.useMailPeer(peer, port: port) }
        try await server.test(.live) { client in
            let email = newAddress()
            #expect(try await client.register(email, Self.password).status == .created)
            await server.services.outboxSender?.deliverDue()
            let entry = try await outboxEntry(to: email, in: server) { $0.lastError != nil }
            #expect(entry.state == "pending")
            #expect(entry.attempts >= 1)
            #expect(entry.nextAttemptAt > server.clock.now())
        }
    }

    @Test func aMailWaitingForTheRelayGoesWhenItComesBack() async throws {
        let peer = try await SMTPPeer.shared()
        let port = try await unusedPort()
        let server = try await TestServer.make { $0.useMailPeer(peer, port: port) }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            _ = try await outboxEntry(to: email, in: server) { $0.lastError != nil }

            let mail = try await TCPForwarder.forwarding(port: port, to: peer.ports.plain) {
                server.clock.advance(by: 31)  // past the first retry (email.retry-interval, 30 s)
                await server.services.outboxSender?.deliverDue()
                return try await peer.mail(to: email)
            }
            #expect(try await outboxEntry(to: email, in: server) { $0.state == "sent" }.lastError == nil)
            #expect(try await client.verify(email, code: mail.code).status == .ok)
        }
    }

    /// The outbox's poll waits `email.poll-interval` on the server's clock: a mail whose retry fell due goes at the next
    /// poll once the clock passes it, with no wake-up and no call from the test.
    @Test func aMailWaitingForTheRelayGoesAtTheNextPollOfTheServersClock() async throws {
        let peer = try await SMTPPeer.shared()
        let port = try await unusedPort()
        let server = try await TestServer.make {
            $0.useMailPeer(peer, port: port)
            $0.email.pollInterval = 60
        }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            _ = try await outboxEntry(to: email, in: server) { $0.lastError != nil }

            let mail = try await TCPForwarder.forwarding(port: port, to: peer.ports.plain) {
                server.clock.advance(by: 61)  // past the first retry (30 s) and the next poll (60 s)
                return try await peer.mail(to: email)
            }
            #expect(try await outboxEntry(to: email, in: server) { $0.state == "sent" }.lastError == nil)
            #expect(try await client.verify(email, code: mail.code).status == .ok)
        }
    }

    @Test func aPermanentRefusalFailsTheMailAtOnce() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress("refuse")
            #expect(try await client.register(email, Self.password).status == .created)
            let entry = try await outboxEntry(to: email, in: server) { $0.lastError != nil }
            #expect(entry.state == "failed")
            #expect(entry.attempts == 1)
            #expect(entry.lastError?.contains("550") == true)
        }
    }

    @Test func aTemporaryRefusalIsRetriedLater() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress("tempfail")
            #expect(try await client.register(email, Self.password).status == .created)
            let entry = try await outboxEntry(to: email, in: server) { $0.lastError != nil }
            #expect(entry.state == "pending")
            #expect(entry.lastError?.contains("451") == true)
            #expect(entry.nextAttemptAt > server.clock.now())
        }
    }

    @Test func mailGoesThroughARelayThatRequiresSTARTTLSAndAuthentication() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { $0.useMailPeer(peer, startTLS: true) }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let delivered = try #require(try await peer.messages(to: email, wait: .seconds(10)).first)
            #expect(delivered.tls)
            #expect(delivered.authentication?.username == peer.username)
        }
    }
}
