import Foundation
import LatchkeySMTP
import LatchkeyTestSupport
import NIOPosix
import Testing

/// Failures against the aiosmtpd peer, each classified for the outbox: retry (transient) or give up (permanent).
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SMTPFailureTests {
    @Test func aWrongPasswordIsPermanentAndNeverShowsThePassword() async throws {
        let peer = try await SMTPPeer.shared()
        let password = "wrong-password-\(UUID().uuidString)"
        let configuration = try peer.configuration(
            port: \.starttls,
            tls: .startTLS,
            host: "localhost",
            credentials: .init(username: peer.username, password: password)
        )
        let recipient = SMTPPeer.recipient()
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [recipient]), with: configuration))
        #expect(error.kind == .permanent)
        #expect(error.code == .authenticationFailed)
        #expect(error.stage == .authentication)
        #expect(error.replyCode == 535)
        let payload = Data("\0\(peer.username)\0\(password)".utf8).base64EncodedString()
        for text in ["\(error)", String(reflecting: error), error.replyText ?? ""] {
            #expect(!text.contains(password))
            #expect(!text.contains(payload))
        }
        #expect(try await peer.messages(to: recipient).isEmpty)
    }

    @Test func aRefusedRecipientIsPermanent() async throws {
        let peer = try await SMTPPeer.shared()
        let recipient = SMTPPeer.recipient("refuse")
        let error = try #require(
            try await SMTPPeer.failure(sending: SMTPPeer.message(to: [recipient]), with: peer.configuration(port: \.plain, tls: .none))
        )
        #expect(error.kind == .permanent)
        #expect(error.code == .rejected)
        #expect(error.stage == .recipient)
        #expect(error.replyCode == 550)
        #expect(error.replyText?.contains("5.1.1") == true)
    }

    @Test func oneRefusedRecipientStopsTheWholeMessage() async throws {
        let peer = try await SMTPPeer.shared()
        let accepted = SMTPPeer.recipient()
        let message = try SMTPPeer.message(to: [accepted, SMTPPeer.recipient("refuse")])
        let error = try #require(try await SMTPPeer.failure(sending: message, with: peer.configuration(port: \.plain, tls: .none)))
        #expect(error.kind == .permanent)
        #expect(try await peer.messages(to: accepted).isEmpty)
    }

    @Test func aTemporaryRecipientFailureIsTransient() async throws {
        let peer = try await SMTPPeer.shared()
        let message = try SMTPPeer.message(to: [SMTPPeer.recipient("tempfail")])
        let error = try #require(try await SMTPPeer.failure(sending: message, with: peer.configuration(port: \.plain, tls: .none)))
        #expect(error.kind == .transient)
        #expect(error.code == .rejected)
        #expect(error.replyCode == 451)
    }

    @Test func aConnectionDroppedDuringDataIsTransientAndNothingIsStored() async throws {
        let peer = try await SMTPPeer.shared()
        let recipient = SMTPPeer.recipient("drop")
        let message = try SMTPPeer.message(to: [recipient])
        let error = try #require(try await SMTPPeer.failure(sending: message, with: peer.configuration(port: \.plain, tls: .none)))
        #expect(error.kind == .transient)
        #expect(error.code == .connectionClosed)
        #expect(error.stage == .messageBody)
        #expect(error.replyCode == nil)
        #expect(try await peer.messages(to: recipient).isEmpty)
    }

    @Test func aServerThatIsDownIsTransientAndFailsFast() async throws {
        let peer = try await SMTPPeer.shared()
        let port = try await Self.closedPort()
        var configuration = try peer.configuration(port: \.plain, tls: .none, commandTimeout: .seconds(5))
        configuration.port = port
        let start = ContinuousClock.now
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient()]), with: configuration))
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(error.kind == .transient)
        #expect(error.code == .connectionFailed)
        #expect(error.stage == .connecting)
    }

    @Test func aSlowReplyTimesOutAsTransient() async throws {
        let peer = try await SMTPPeer.shared()
        let configuration = try peer.configuration(port: \.plain, tls: .none, commandTimeout: .milliseconds(300))
        let start = ContinuousClock.now
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient("slow")]), with: configuration))
        // The peer answers after 5 s.
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(error.kind == .transient)
        #expect(error.code == .timedOut)
        #expect(error.stage == .recipient)
    }

    @Test func theTotalTimeoutEndsADeliveryWhoseCommandsAreEachInTime() async throws {
        let peer = try await SMTPPeer.shared()
        let configuration = try peer.configuration(port: \.plain, tls: .none, commandTimeout: .seconds(10), totalTimeout: .milliseconds(500))
        let start = ContinuousClock.now
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient("slow")]), with: configuration))
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(error.code == .timedOut)
        #expect(error.kind == .transient)
    }

    /// A port nothing listens on: bound, then closed again.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}
