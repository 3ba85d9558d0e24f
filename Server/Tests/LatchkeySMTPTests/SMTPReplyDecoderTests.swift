import NIOCore
import NIOEmbedded
import NIOSSL
import Testing

@testable import LatchkeySMTP

/// Reply parsing and the STARTTLS boundary, on an `EmbeddedChannel` with the client's own pipeline.
struct SMTPReplyDecoderTests {
    static func channel(startTLS: SMTPTLSUpgrade? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(SMTPCommandEncoder()))
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder(startTLS: startTLS)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 25)).wait()
        return channel
    }

    static func replies(_ chunks: String...) throws -> [SMTPReply] {
        let channel = try Self.channel()
        for chunk in chunks { try channel.writeInbound(ByteBuffer(string: chunk)) }
        var replies: [SMTPReply] = []
        while let reply = try channel.readInbound(as: SMTPReply.self) { replies.append(reply) }
        _ = try channel.finish()
        return replies
    }

    @Test func aSingleLineReply() throws {
        #expect(try Self.replies("220 mail.example.com ESMTP ready\r\n") == [SMTPReply(code: 220, lines: ["mail.example.com ESMTP ready"])])
    }

    @Test func aMultiLineReplyIsOneReply() throws {
        let replies = try Self.replies("250-mail.example.com\r\n250-STARTTLS\r\n250-AUTH PLAIN LOGIN\r\n250 SIZE 1000\r\n221 bye\r\n")
        #expect(
            replies == [
                SMTPReply(code: 250, lines: ["mail.example.com", "STARTTLS", "AUTH PLAIN LOGIN", "SIZE 1000"]),
                SMTPReply(code: 221, lines: ["bye"]),
            ]
        )
    }

    @Test func aReplySplitAcrossReadsIsJoined() throws {
        let replies = try Self.replies("25", "0-first\r", "\n250 sec", "ond\r\n")
        #expect(replies == [SMTPReply(code: 250, lines: ["first", "second"])])
    }

    @Test func aBareCodeAndABareLineFeedAreAccepted() throws {
        #expect(try Self.replies("250\r\n354 go\n") == [SMTPReply(code: 250, lines: [""]), SMTPReply(code: 354, lines: ["go"])])
    }

    @Test(arguments: [
        "250-first\r\n251 second\r\n", "hello\r\n", "2500 x\r\n", "250_x\r\n", "650 x\r\n", "25\r\n",
        String(repeating: "x", count: 3000),
    ])
    func aMalformedReplyIsAProtocolViolation(input: String) throws {
        let channel = try Self.channel()
        do {
            try channel.writeInbound(ByteBuffer(string: input))
            Issue.record("\(input.prefix(40).debugDescription) was accepted")
        } catch let error as SMTPError {
            #expect(error.code == .malformedReply)
            #expect(error.kind == .protocolViolation)
        }
        _ = try? channel.finish()
    }

    @Test func theTLSHandlerIsInsertedRightAfterTheSTARTTLSReply() throws {
        let upgrade = try SMTPTLSUpgrade(configuration: SMTPConfiguration(host: "mail.example.com", tls: .startTLS))
        let channel = try Self.channel(startTLS: upgrade)
        try channel.writeOutbound(SMTPCommand.startTLS)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "STARTTLS\r\n"))
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
        try channel.writeInbound(ByteBuffer(string: "220 go ahead\r\n"))
        #expect(try channel.readInbound(as: SMTPReply.self)?.code == 220)
        _ = try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        // The handler at the front started the handshake: a TLS record (handshake, 0x16) went out.
        let clientHello = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(clientHello.getInteger(at: clientHello.readerIndex, as: UInt8.self) == 0x16)
        _ = try? channel.finish()
    }

    @Test func plaintextAfterTheSTARTTLSReplyIsRefused() throws {
        let upgrade = try SMTPTLSUpgrade(configuration: SMTPConfiguration(host: "mail.example.com", tls: .startTLS))
        let channel = try Self.channel(startTLS: upgrade)
        try channel.writeOutbound(SMTPCommand.startTLS)
        do {
            try channel.writeInbound(ByteBuffer(string: "220 go ahead\r\n250-injected\r\n250 AUTH PLAIN\r\n"))
            Issue.record("the injected plaintext was accepted")
        } catch let error as SMTPError {
            #expect(error.code == .unexpectedReply)
            #expect(error.kind == .protocolViolation)
        }
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
        _ = try? channel.finish()
    }

    @Test func aRefusedSTARTTLSLeavesTheConnectionPlain() throws {
        let upgrade = try SMTPTLSUpgrade(configuration: SMTPConfiguration(host: "mail.example.com", tls: .startTLS))
        let channel = try Self.channel(startTLS: upgrade)
        try channel.writeOutbound(SMTPCommand.startTLS)
        try channel.writeInbound(ByteBuffer(string: "454 TLS not available\r\n"))
        #expect(try channel.readInbound(as: SMTPReply.self)?.code == 454)
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
        _ = try? channel.finish()
    }

    @Test func commandsAreWrittenAsCRLFLines() throws {
        let channel = try Self.channel()
        let commands: [(SMTPCommand, String)] = [
            (.extendedHello(domain: "client.example.com"), "EHLO client.example.com\r\n"),
            (.mailFrom(address: "a@example.com"), "MAIL FROM:<a@example.com>\r\n"),
            (.recipient(address: "b@example.com"), "RCPT TO:<b@example.com>\r\n"),
            (.authenticate(mechanism: "PLAIN", initialResponse: "AGEAYg=="), "AUTH PLAIN AGEAYg==\r\n"),
            (.data, "DATA\r\n"),
            (.messageBody(ByteBuffer(string: "x\r\n.\r\n")), "x\r\n.\r\n"),
            (.quit, "QUIT\r\n"),
        ]
        for (command, line) in commands {
            try channel.writeOutbound(command)
            #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: line))
        }
        _ = try channel.finish()
    }
}
