/// Why ``SMTPClient/send(_:)`` failed: a ``kind`` that decides whether to retry, a ``code`` for programs, and the
/// server's reply (code and sanitised text) when there was one.
///
/// ``Kind-swift.struct/permanent`` means the server refused with a 5xx reply (or the configuration can never work):
/// retrying the same message is pointless. Everything else (4xx replies, refused or reset connections, timeouts, TLS
/// failures, a missing STARTTLS or AUTH capability) is ``Kind-swift.struct/transient``. TLS failures count as
/// transient as mail servers treat them (Postfix defers mail when mandatory TLS fails): a certificate gets renewed, a
/// middlebox that strips STARTTLS goes away.
///
/// A connection lost after the message was sent but before the server's final reply (``Stage-swift.struct/messageBody``)
/// is transient too, although the server may already have accepted the message: SMTP cannot tell (RFC 1047), and
/// retrying risks a duplicate rather than a lost mail. The unchanged ``MailMessage/messageID`` lets the receiver spot it.
///
/// No error ever contains the password or an AUTH payload, even when a server echoes one back.
public struct SMTPError: Error, Sendable, CustomStringConvertible {
    /// What a sender should do about the failure.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case transient, permanent
            case protocolViolation = "protocol violation"
        }
        private let base: Base

        /// Try again later, with backoff.
        public static let transient = Kind(base: .transient)
        /// Give up: the server refused for good, or the configuration cannot work.
        public static let permanent = Kind(base: .permanent)
        /// The server broke the protocol (a malformed or unexpected reply, data injected around STARTTLS). Treat it
        /// like a transient failure, but it deserves an operator's look.
        public static let protocolViolation = Kind(base: .protocolViolation)

        public var description: String { self.base.rawValue }
    }

    /// How far the conversation got when it failed.
    public struct Stage: Sendable, Hashable, CustomStringConvertible {
        private let name: String

        public static let connecting = Stage(name: "connecting")
        public static let greeting = Stage(name: "greeting")
        public static let hello = Stage(name: "EHLO/HELO")
        public static let startTLS = Stage(name: "STARTTLS")
        public static let authentication = Stage(name: "AUTH")
        public static let mailFrom = Stage(name: "MAIL FROM")
        public static let recipient = Stage(name: "RCPT TO")
        public static let data = Stage(name: "DATA")
        /// The message was being sent or its final reply awaited.
        public static let messageBody = Stage(name: "message body")

        public var description: String { self.name }
    }

    /// Whether to retry.
    public let kind: Kind
    /// What went wrong.
    public let code: Code
    /// When it went wrong.
    public internal(set) var stage: Stage
    /// The server's three-digit reply code, when the failure is a reply.
    public let replyCode: Int?
    /// The server's reply text: control characters removed, secrets redacted, at most 200 characters.
    public let replyText: String?
    /// What the client observed, without secrets.
    let detail: String

    init(_ code: Code, stage: Stage, kind: Kind? = nil, detail: String, reply: SMTPReply? = nil, redacting secrets: [String] = []) {
        self.code = code
        self.stage = stage
        self.kind = kind ?? reply.map(Self.kind(of:)) ?? code.defaultKind
        self.replyCode = reply?.code
        self.replyText = reply.map { Self.sanitise($0.text, redacting: secrets) }
        self.detail = Self.sanitise(detail, redacting: secrets)
    }

    public var description: String {
        var text = "SMTP \(self.kind) failure (\(self.code)) at \(self.stage): \(self.detail)"
        if let replyCode { text += " (server: \(replyCode) \(self.replyText ?? ""))" }
        return text
    }

    /// 4xx is transient, 5xx permanent; any other code where a failure was expected breaks the protocol.
    static func kind(of reply: SMTPReply) -> Kind {
        switch reply.code {
        case 400..<500: .transient
        case 500..<600: .permanent
        default: .protocolViolation
        }
    }

    /// One line of at most 200 printable characters with every secret replaced by `<redacted>`.
    static func sanitise(_ text: String, redacting secrets: [String]) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty { text = text.replacing(secret, with: "<redacted>") }
        let printable = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        return printable.count > 200 ? String(printable.prefix(200)) + "…" : printable
    }
}

extension SMTPError {
    /// The same error placed at `stage` (the reply decoder does not know the stage it fails in).
    func at(_ stage: Stage) -> SMTPError {
        var error = self
        error.stage = stage
        return error
    }
}
