import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import NIOCore
import NIOPosix
import Testing

/// A mail the server sent, read back from the SMTP peer: its headers and parts, and the 6-digit code and link token
/// in its text part (quoted-printable decoded).
struct AccountMail: Sendable {
    let message: RenderedMessage
    let text: String
    let html: String
    let code: String
    let token: String

    init(_ delivered: DeliveredMessage) throws {
        self.message = RenderedMessage(delivered.raw)
        let parts = self.message.parts()
        self.text = try #require(parts.first { $0.headers["content-type"]?.hasPrefix("text/plain") == true }?.decodedBody)
        self.html = try #require(parts.first { $0.headers["content-type"]?.hasPrefix("text/html") == true }?.decodedBody)
        // The code stands on a line of its own.
        let lines = self.text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        self.code = try #require(lines.first { $0.count == 6 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        self.token = String(try #require(self.text.firstMatch(of: /\?token=([A-Za-z0-9_-]+)/)?.output.1))
    }
}

extension SMTPPeer {
    /// The first `count` mails to `recipient`, waiting (in real time, up to 20 s) for them to be delivered.
    func mails(to recipient: String, count: Int = 1) async throws -> [AccountMail] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let delivered = try await self.messages(to: recipient, wait: .seconds(10))
            if delivered.count >= count || ContinuousClock.now > deadline { return try delivered.prefix(count).map(AccountMail.init) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The one mail to `recipient` (the first when more came).
    func mail(to recipient: String) async throws -> AccountMail {
        try #require(try await self.mails(to: recipient).first)
    }
}

extension LatchkeyConfiguration {
    /// Email accounts on, mailing through the relay at 127.0.0.1:`port` without TLS, with cheap password hashes.
    mutating func useMailRelay(port: Int) {
        self.email.smtpHost = "127.0.0.1"
        self.email.smtpPort = port
        self.email.smtpTLS = "none"
        self.email.from = "no-reply@latchkey.test"
        self.email.pollInterval = 0.2
        self.email.smtpTimeout = 10
        self.email.argon2Memory = 64
        self.email.argon2Iterations = 1
    }

    /// Email accounts on, mailing through the peer's plain port (or `port`); with `startTLS`, through the port that
    /// requires STARTTLS and AUTH instead, trusting the peer's CA.
    mutating func useMailPeer(_ peer: SMTPPeer, port: Int? = nil, startTLS: Bool = false) {
        self.useMailRelay(port: port ?? (startTLS ? peer.ports.starttls : peer.ports.plain))
        if startTLS {
            self.email.smtpTLS = "starttls"
            self.email.smtpCAFile = peer.caCertificatePath
            self.email.smtpUsername = peer.username
            self.email.smtpPassword = peer.password
        }
    }
}

extension TestClientProtocol {
    func register(_ email: String, _ password: String, bearer: String? = nil) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/auth/register", bearer: bearer, body: EmailRegistrationRequest(email: email, password: password))
    }

    func verify(_ email: String, code: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/auth/verify-email", body: VerifyEmailRequest(email: email, code: code))
    }

    func login(_ email: String, _ password: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/auth/login", body: PasswordLoginRequest(email: email, password: password))
    }

    /// Registers `email`, verifies it with the mailed code and signs in: the session's token pair.
    func verifiedAccount(_ email: String, _ password: String, peer: SMTPPeer, bearer: String? = nil) async throws -> TokenPairResponse {
        let registered = try await self.register(email, password, bearer: bearer)
        guard registered.status == .created else { throw TestFailure("register answered \(registered.status): \(registered.text)") }
        let verified = try await self.verify(email, code: try await peer.mail(to: email).code)
        guard verified.status == .ok else { throw TestFailure("verify-email answered \(verified.status): \(verified.text)") }
        return try await self.login(email, password).decode(TokenPairResponse.self)
    }

    /// Posts an HTML form (`application/x-www-form-urlencoded`), as a browser does.
    func postForm(
        _ uri: String, _ fields: KeyValuePairs<String, String>, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> TestResponse
    {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        let response = try await self.execute(
            uri: uri, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: body))
        response.checkDocumented(.post, uri, sourceLocation: sourceLocation)
        return response
    }
}

/// A fresh recipient address of the peer's (`ann+…@example.test`, or with `localPart` one of its misbehaving ones).
func newAddress(_ localPart: String = "ann") -> String { SMTPPeer.recipient(localPart) }

/// The outbox row of the mail to `recipient` once `condition` holds for it, waiting (in real time, up to 20 s) for the
/// sender to get there.
func outboxEntry(to recipient: String, in server: TestServer, where condition: (OutboxEntry) -> Bool) async throws -> OutboxEntry {
    let deadline = ContinuousClock.now + .seconds(20)
    while true {
        let entry = try await server.services.store.outbox(limit: 100, pendingOnly: false).first { $0.recipient == recipient }
        if let entry, condition(entry) { return entry }
        guard ContinuousClock.now < deadline else { throw TestFailure("the outbox row to \(recipient) is \(String(describing: entry))") }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// A TCP port nothing listens on (one the kernel just handed out and took back).
func unusedPort() async throws -> Int {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
    let port = try #require(channel.localAddress?.port)
    try await channel.close()
    return port
}

/// Runs `body` against a fresh live server whose email accounts mail through the test run's SMTP peer
/// (``LatchkeyConfiguration/useMailPeer(_:port:startTLS:)``: plain port, cheap hashes).
func withMailServer(_ body: @Sendable @escaping (any TestClientProtocol, TestServer, SMTPPeer) async throws -> Void) async throws {
    let peer = try await SMTPPeer.shared()
    let server = try await TestServer.make { $0.useMailPeer(peer) }
    try await server.test(.live) { client in try await body(client, server, peer) }
}
