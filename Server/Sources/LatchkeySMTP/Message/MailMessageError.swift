/// Why a ``MailMessage``, ``MailAddress`` or ``MailHeader`` could not be made.
///
/// Thrown by their initialisers, so a message that exists can always be rendered and sent safely: no value can carry
/// a line break into the header section (header injection) or angle brackets into the SMTP envelope.
public struct MailMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, for programs to match.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidAddress = "invalid address"
            case invalidHeader = "invalid header"
            case noRecipients = "no recipients"
        }
        private let base: Base

        /// An address with a line break, control character, space, angle bracket or non-ASCII character, or empty.
        public static let invalidAddress = Code(base: .invalidAddress)
        /// A header name or value (subject, display name, extra header) that cannot be written safely.
        public static let invalidHeader = Code(base: .invalidHeader)
        /// A message without recipients.
        public static let noRecipients = Code(base: .noRecipients)

        public var description: String { self.base.rawValue }
    }

    /// What was wrong.
    public let code: Code
    /// A readable explanation, naming the field but never echoing control characters.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }
}
