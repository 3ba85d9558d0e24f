import NIOCore
import NIOPosix

/// Sends mail through one SMTP relay: a new connection per message, STARTTLS or implicit TLS, AUTH PLAIN or LOGIN.
///
/// ```swift
/// let client = try SMTPClient(configuration: SMTPConfiguration(
///     host: "smtp.example.com", tls: .startTLS,
///     credentials: .init(username: "apikey", password: secret), heloName: "auth.example.com"))
/// try await client.send(message)
/// ```
///
/// A delivery either ends with the server's acceptance of the message (the final `250` after `DATA`), or throws an
/// ``SMTPError`` whose ``SMTPError/kind`` says whether to retry. Every recipient must be accepted; when one is refused,
/// nothing is sent.
public struct SMTPClient: Sendable {
    /// The relay and how to talk to it.
    public let configuration: SMTPConfiguration
    private let tls: SMTPTLSUpgrade?
    private let eventLoopGroup: any EventLoopGroup

    /// Checks the configuration and loads its trust roots; throws an ``SMTPError`` with code
    /// ``SMTPError/Code/invalidConfiguration`` when it cannot work.
    public init(configuration: SMTPConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        try Self.validate(configuration)
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        do {
            self.tls = configuration.tls == .none ? nil : try SMTPTLSUpgrade(configuration: configuration)
        } catch {
            throw SMTPError(.invalidConfiguration, stage: .connecting, detail: "the TLS settings cannot be used: \(error)")
        }
    }

    /// Delivers `message` to all its recipients; returns once the server has accepted it.
    ///
    /// - Throws: ``SMTPError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: MailMessage) async throws {
        let body = SMTPMessageBody.encode(message.rendered())
        let deadline = NIODeadline.now() + TimeAmount(self.configuration.totalTimeout)
        let connection = try await SMTPConnection.open(
            configuration: self.configuration,
            tls: self.tls,
            group: self.eventLoopGroup,
            deadline: deadline
        )
        try await connection.executeThenClose { inbound, outbound in
            let watchdog = connection.channel.eventLoop.scheduleTask(deadline: deadline) {
                SMTPConnection.fail(connection.channel, SMTPError(.timedOut, stage: .connecting, detail: "the delivery took too long"))
            }
            defer { watchdog.cancel() }
            var session = SMTPSession(
                configuration: self.configuration,
                channel: connection.channel,
                replies: inbound.makeAsyncIterator(),
                outbound: outbound
            )
            try await session.deliver(message, body: body)
        }
    }

    private static func validate(_ configuration: SMTPConfiguration) throws {
        func invalid(_ detail: String) -> SMTPError { SMTPError(.invalidConfiguration, stage: .connecting, detail: detail) }
        guard !configuration.heloName.isEmpty,
            configuration.heloName.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" })
        else { throw invalid("the HELO name must be printable ASCII without spaces") }
        guard (1...65_535).contains(configuration.port) else { throw invalid("the port must be 1-65535") }
        guard configuration.commandTimeout > .zero, configuration.totalTimeout > .zero else { throw invalid("timeouts must be positive") }
        if let credentials = configuration.credentials {
            guard !credentials.username.isEmpty, !credentials.username.contains("\0"), !credentials.password.contains("\0") else {
                throw invalid("the username must be non-empty and neither username nor password may contain NUL")
            }
        }
    }
}
