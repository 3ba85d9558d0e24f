extension SMTPError {
    /// What went wrong, for programs to match (metrics, alerts); decide retries with ``SMTPError/kind``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connectionFailed = "connection failed"
            case connectionClosed = "connection closed"
            case timedOut = "timed out"
            case tlsFailed = "TLS failed"
            case startTLSNotOffered = "STARTTLS not offered"
            case authenticationNotOffered = "authentication not offered"
            case authenticationFailed = "authentication failed"
            case rejected
            case malformedReply = "malformed reply"
            case unexpectedReply = "unexpected reply"
            case invalidConfiguration = "invalid configuration"
        }
        private let base: Base

        /// The server could not be reached: refused, unreachable, or the name did not resolve.
        public static let connectionFailed = Code(base: .connectionFailed)
        /// The connection closed or reset before the conversation ended.
        public static let connectionClosed = Code(base: .connectionClosed)
        /// A command's reply, or the whole conversation, took longer than its timeout.
        public static let timedOut = Code(base: .timedOut)
        /// The TLS handshake failed: an untrusted or expired certificate, a name mismatch, no common protocol.
        public static let tlsFailed = Code(base: .tlsFailed)
        /// STARTTLS was required but the server did not offer it (or refused it).
        public static let startTLSNotOffered = Code(base: .startTLSNotOffered)
        /// Credentials are configured but the server offers neither AUTH PLAIN nor AUTH LOGIN.
        public static let authenticationNotOffered = Code(base: .authenticationNotOffered)
        /// The server refused the credentials (usually 535, permanent) or could not check them now (454, transient).
        public static let authenticationFailed = Code(base: .authenticationFailed)
        /// The server refused a command: the greeting, a sender, a recipient, or the message.
        public static let rejected = Code(base: .rejected)
        /// A reply that is not SMTP: no three-digit code, mixed codes, an overlong line.
        public static let malformedReply = Code(base: .malformedReply)
        /// A well-formed reply that makes no sense at that point, or data sent around STARTTLS.
        public static let unexpectedReply = Code(base: .unexpectedReply)
        /// The configuration cannot work (an unreadable CA certificate, a NUL in the credentials, a bad HELO name).
        public static let invalidConfiguration = Code(base: .invalidConfiguration)

        public var description: String { self.base.rawValue }

        var defaultKind: Kind {
            switch self.base {
            case .malformedReply, .unexpectedReply: .protocolViolation
            case .invalidConfiguration: .permanent
            default: .transient
            }
        }
    }
}
