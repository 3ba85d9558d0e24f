import NIOCore

/// One SMTP conversation (RFC 5321 §3), strictly one command and one reply at a time.
struct SMTPSession {
    let configuration: SMTPConfiguration
    let channel: any Channel
    var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<SMTPCommand>
    /// The password and AUTH payloads sent so far, redacted from every error.
    var secrets: [String] = []

    init(
        configuration: SMTPConfiguration,
        channel: any Channel,
        replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<SMTPCommand>
    ) {
        self.configuration = configuration
        self.channel = channel
        self.replies = replies
        self.outbound = outbound
        self.secrets = configuration.credentials.map { [$0.password] } ?? []
    }

    /// Greeting, EHLO, STARTTLS and EHLO again, AUTH, MAIL FROM, RCPT TO for each recipient, DATA, the message, QUIT.
    mutating func deliver(_ message: MailMessage, body: ByteBuffer) async throws {
        do {
            try await self.transact(message, body: body)
        } catch let error as SMTPError where error.replyCode != nil {
            // The connection still works: say goodbye politely, without waiting for the answer.
            try? await self.outbound.write(.quit)
            throw error
        }
        // The message is accepted; how QUIT goes no longer matters.
        _ = try? await self.exchange(.quit, stage: .messageBody)
    }

    private mutating func transact(_ message: MailMessage, body: ByteBuffer) async throws {
        try await self.expect(220, from: self.exchange(nil, stage: .greeting), stage: .greeting, failure: .rejected)
        var capabilities = try await self.hello()
        if self.configuration.tls == .startTLS {
            guard capabilities.supportsStartTLS else {
                throw SMTPError(.startTLSNotOffered, stage: .startTLS, detail: "STARTTLS is required but the server does not offer it")
            }
            try await self.expect(220, from: self.exchange(.startTLS, stage: .startTLS), stage: .startTLS, failure: .startTLSNotOffered)
            // RFC 3207 §4.2: forget what the server said before TLS and ask again.
            capabilities = try await self.hello()
        }
        if let credentials = self.configuration.credentials {
            try await self.authenticate(credentials, mechanisms: capabilities.authenticationMechanisms)
        }
        try await self.expectCompletion(.mailFrom(address: message.from.address), stage: .mailFrom)
        for recipient in message.to {
            try await self.expectCompletion(.recipient(address: recipient.address), stage: .recipient)
        }
        try await self.expect(354, from: self.exchange(.data, stage: .data), stage: .data, failure: .rejected)
        try await self.expectCompletion(.messageBody(body), stage: .messageBody)
    }

    /// EHLO, or HELO when the server refuses EHLO (5xx: it predates ESMTP).
    private mutating func hello() async throws -> SMTPCapabilities {
        let reply = try await self.exchange(.extendedHello(domain: self.configuration.heloName), stage: .hello)
        if reply.isPositiveCompletion { return SMTPCapabilities(ehloReply: reply) }
        guard (500..<600).contains(reply.code) else { throw self.failure(.rejected, reply, stage: .hello) }
        try await self.expectCompletion(.hello(domain: self.configuration.heloName), stage: .hello)
        return .none
    }

    mutating func expectCompletion(_ command: SMTPCommand, stage: SMTPError.Stage, failure: SMTPError.Code = .rejected) async throws {
        let reply = try await self.exchange(command, stage: stage)
        guard reply.isPositiveCompletion else { throw self.failure(failure, reply, stage: stage) }
    }

    func expect(_ code: Int, from reply: SMTPReply, stage: SMTPError.Stage, failure: SMTPError.Code) throws {
        guard reply.code == code else { throw self.failure(failure, reply, stage: stage) }
    }

    /// A refusal, or (for a success code where another was due) an unexpected reply.
    func failure(_ code: SMTPError.Code, _ reply: SMTPReply, stage: SMTPError.Stage) -> SMTPError {
        guard reply.code >= 400 else {
            return SMTPError(.unexpectedReply, stage: stage, detail: "a reply that makes no sense here", reply: reply, redacting: self.secrets)
        }
        return SMTPError(code, stage: stage, detail: "the server refused the command", reply: reply, redacting: self.secrets)
    }

    /// Sends `command` (nothing for the greeting) and reads its reply, within the command timeout.
    mutating func exchange(_ command: SMTPCommand?, stage: SMTPError.Stage) async throws -> SMTPReply {
        let channel = self.channel
        let timeout = self.configuration.commandTimeout
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            SMTPConnection.fail(channel, SMTPError(.timedOut, stage: stage, detail: "no reply within \(timeout)"))
        }
        defer { timer.cancel() }
        do {
            if let command {
                do {
                    try await self.outbound.write(command)
                } catch {
                    // The channel closed under the write: the replies say why (a final reply, a timeout, a TLS error).
                    guard let reply = try await self.replies.next() else { throw error }
                    return reply
                }
            }
            guard let reply = try await self.replies.next() else {
                try Task.checkCancellation()
                throw SMTPError.closed(at: stage)
            }
            return reply
        } catch let error as CancellationError {
            throw error
        } catch {
            throw SMTPError.from(error, stage: stage, redacting: self.secrets)
        }
    }
}
