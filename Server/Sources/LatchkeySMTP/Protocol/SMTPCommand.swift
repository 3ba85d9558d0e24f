import NIOCore

/// A command the client sends, or the message itself after `DATA`.
///
/// The description never shows AUTH payloads, so a command can be logged or end up in a failure message safely.
enum SMTPCommand: Sendable, CustomStringConvertible {
    case extendedHello(domain: String)
    case hello(domain: String)
    case startTLS
    /// `AUTH <mechanism>` with an optional initial response (base64).
    case authenticate(mechanism: String, initialResponse: String?)
    /// A base64 line answering a `334` challenge.
    case authenticationResponse(String)
    case mailFrom(address: String)
    case recipient(address: String)
    case data
    /// The message, already dot-stuffed and ending with `CRLF . CRLF` (see ``SMTPMessageBody``).
    case messageBody(ByteBuffer)
    case quit

    /// The command line without its CRLF; nil for the message body.
    var line: String? {
        switch self {
        case .extendedHello(let domain): "EHLO \(domain)"
        case .hello(let domain): "HELO \(domain)"
        case .startTLS: "STARTTLS"
        case .authenticate(let mechanism, let initialResponse): initialResponse.map { "AUTH \(mechanism) \($0)" } ?? "AUTH \(mechanism)"
        case .authenticationResponse(let response): response
        case .mailFrom(let address): "MAIL FROM:<\(address)>"
        case .recipient(let address): "RCPT TO:<\(address)>"
        case .data: "DATA"
        case .messageBody: nil
        case .quit: "QUIT"
        }
    }

    var description: String {
        switch self {
        case .authenticate(let mechanism, let initialResponse): initialResponse == nil ? "AUTH \(mechanism)" : "AUTH \(mechanism) <redacted>"
        case .authenticationResponse: "<redacted>"
        case .messageBody(let body): "<message, \(body.readableBytes) bytes>"
        default: self.line ?? ""
        }
    }
}

/// Writes ``SMTPCommand`` values as CRLF-terminated lines (the message body as it is).
struct SMTPCommandEncoder: MessageToByteEncoder {
    typealias OutboundIn = SMTPCommand

    func encode(data: SMTPCommand, out: inout ByteBuffer) {
        if case .messageBody(let body) = data {
            out.writeImmutableBuffer(body)
        } else if let line = data.line {
            out.writeString(line)
            out.writeStaticString("\r\n")
        }
    }
}
