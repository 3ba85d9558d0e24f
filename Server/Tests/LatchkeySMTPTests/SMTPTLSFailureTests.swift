import LatchkeySMTP
import LatchkeyTestSupport
import Testing

/// TLS is verified, required when configured, and never silently skipped.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SMTPTLSFailureTests {
    @Test func aCertificateFromAnUntrustedCAIsRefused() async throws {
        let peer = try await SMTPPeer.shared()
        let recipient = SMTPPeer.recipient()
        let configuration = try peer.configuration(port: \.implicitTLS, tls: .implicit, host: "localhost", trustRoots: .system)
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [recipient]), with: configuration))
        #expect(error.code == .tlsFailed)
        #expect(error.kind == .transient)
        #expect(try await peer.messages(to: recipient).isEmpty)
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        let peer = try await SMTPPeer.shared()
        let configuration = try peer.configuration(port: \.implicitTLSWrongName, tls: .implicit, host: "localhost")
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient()]), with: configuration))
        #expect(error.code == .tlsFailed)
    }

    @Test func anUntrustedCertificateIsRefusedAfterSTARTTLSToo() async throws {
        let peer = try await SMTPPeer.shared()
        let configuration = try peer.configuration(port: \.starttls, tls: .startTLS, host: "localhost", trustRoots: .system)
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient()]), with: configuration))
        #expect(error.code == .tlsFailed)
        #expect(error.stage == .hello)
    }

    @Test func requiredSTARTTLSThatIsNotOfferedFailsBeforeAnythingIsSent() async throws {
        let peer = try await SMTPPeer.shared()
        let recipient = SMTPPeer.recipient()
        let configuration = try peer.configuration(port: \.plain, tls: .startTLS)
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [recipient]), with: configuration))
        #expect(error.code == .startTLSNotOffered)
        #expect(error.stage == .startTLS)
        #expect(error.kind == .transient)
        #expect(try await peer.messages(to: recipient).isEmpty)
    }

    @Test func requiredSTARTTLSFailsWhenEHLOIsRefused() async throws {
        let peer = try await SMTPPeer.shared()
        let error = try #require(
            try await SMTPPeer.failure(
                sending: SMTPPeer.message(to: [SMTPPeer.recipient()]),
                with: peer.configuration(port: \.heloOnly, tls: .startTLS)
            )
        )
        #expect(error.code == .startTLSNotOffered)
    }

    @Test func credentialsAreNeverSentWhereAuthIsNotOffered() async throws {
        let peer = try await SMTPPeer.shared()
        let configuration = try peer.configuration(
            port: \.plain,
            tls: .none,
            credentials: .init(username: peer.username, password: peer.password)
        )
        let error = try #require(try await SMTPPeer.failure(sending: SMTPPeer.message(to: [SMTPPeer.recipient()]), with: configuration))
        #expect(error.code == .authenticationNotOffered)
        #expect(error.stage == .authentication)
    }

}
