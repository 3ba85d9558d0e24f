import NIOCore
import NIOSSL

/// Decodes the server's bytes into ``SMTPReply`` values, joining multi-line replies (`250-...` continuations), and
/// performs the STARTTLS upgrade at the exact reply boundary.
///
/// The decoder watches outbound commands (a `WriteObservingByteToMessageDecoder`). When it decodes the `220` reply to
/// `STARTTLS`, it inserts the TLS handler at the front of the pipeline right there, on the event loop, before any later
/// byte is read: so no plaintext the server (or a man in the middle) sends after that reply can be taken for a reply
/// on the encrypted connection (the STARTTLS command-injection flaw, CVE-2011-0411). Bytes already received behind
/// that reply are refused as a protocol violation.
struct SMTPReplyDecoder: WriteObservingByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    typealias OutboundIn = SMTPCommand

    /// Longer than RFC 5321's 512 octets, for lenient servers; a line without an end beyond this is refused.
    static let maximumLineLength = 2048
    /// Lines in one multi-line reply (large EHLO replies have about 20).
    static let maximumLinesPerReply = 200

    /// Makes the TLS handler when the server accepts STARTTLS; nil when TLS is not wanted.
    private let startTLS: SMTPTLSUpgrade?
    private var awaitingStartTLSReply = false
    private var pending: SMTPReply?

    init(startTLS: SMTPTLSUpgrade? = nil) {
        self.startTLS = startTLS
    }

    mutating func write(data: SMTPCommand) {
        if case .startTLS = data { self.awaitingStartTLSReply = true }
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let line = try Self.readLine(from: &buffer) else { return .needMoreData }
        let (code, isLast, text) = try Self.parse(line)
        var reply = self.pending ?? SMTPReply(code: code, lines: [])
        guard reply.code == code else { throw Self.malformed("a multi-line reply mixes the codes \(reply.code) and \(code)") }
        guard reply.lines.count < Self.maximumLinesPerReply else { throw Self.malformed("a reply has too many lines") }
        reply.lines.append(text)
        guard isLast else {
            self.pending = reply
            return .continue
        }
        self.pending = nil
        guard self.awaitingStartTLSReply else {
            context.fireChannelRead(Self.wrapInboundOut(reply))
            return .continue
        }
        self.awaitingStartTLSReply = false
        if reply.code == 220 {
            try self.upgrade(context: context, leftover: buffer)
            context.fireChannelRead(Self.wrapInboundOut(reply))
            // The TLS handler now at the front swallows this read's channelReadComplete (it completes reads of its
            // own, after decrypting), and NIOAsyncChannel hands reads to the reader only on channelReadComplete:
            // without this the 220 would wait for the next TLS record, which the server sends only after EHLO.
            context.fireChannelReadComplete()
        } else {
            context.fireChannelRead(Self.wrapInboundOut(reply))
        }
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try self.decode(context: context, buffer: &buffer) == .continue {}
        // A partial reply at the end is dropped: the connection is gone and the reader sees it closed.
        return .needMoreData
    }

    private func upgrade(context: ChannelHandlerContext, leftover: ByteBuffer) throws {
        guard leftover.readableBytes == 0 else {
            throw SMTPError(.unexpectedReply, stage: .startTLS, detail: "the server sent data after its STARTTLS reply, before TLS")
        }
        guard let startTLS = self.startTLS else {
            throw SMTPError(.unexpectedReply, stage: .startTLS, detail: "STARTTLS was sent without a TLS configuration")
        }
        try context.pipeline.syncOperations.addHandler(try startTLS.makeHandler(), position: .first)
    }

    /// The next line without its CRLF (a bare LF is tolerated), or nil when it is not complete yet.
    private static func readLine(from buffer: inout ByteBuffer) throws -> String? {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLineLength { throw Self.malformed("a reply line is too long") }
            return nil
        }
        let length = newline - buffer.readerIndex
        guard length <= Self.maximumLineLength else { throw Self.malformed("a reply line is too long") }
        var bytes = buffer.readBytes(length: length + 1)!
        bytes.removeLast()
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `250-text` (continued), `250 text` or `250` (last line): the code, whether the line is the last, and the text.
    static func parse(_ line: String) throws -> (code: Int, isLast: Bool, text: String) {
        let utf8 = Array(line.utf8)
        guard utf8.count >= 3, utf8[0] >= UInt8(ascii: "2"), utf8[0] <= UInt8(ascii: "5"),
            utf8[1...2].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let code = Int(String(decoding: utf8[0..<3], as: UTF8.self))
        else {
            throw Self.malformed("a reply line does not start with a code 200-599: \(line.prefix(40))")
        }
        if utf8.count == 3 { return (code, true, "") }
        switch utf8[3] {
        case UInt8(ascii: " "): return (code, true, String(decoding: utf8[4...], as: UTF8.self))
        case UInt8(ascii: "-"): return (code, false, String(decoding: utf8[4...], as: UTF8.self))
        default: throw Self.malformed("a reply line has no space or '-' after its code: \(line.prefix(40))")
        }
    }

    private static func malformed(_ detail: String) -> SMTPError {
        SMTPError(.malformedReply, stage: .connecting, kind: .protocolViolation, detail: detail)
    }
}
