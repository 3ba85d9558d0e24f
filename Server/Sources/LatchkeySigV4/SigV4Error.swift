/// Why a request could not be signed. Programs match ``code``; ``message`` is for people.
public struct SigV4Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a value a program can match (new codes may be added).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidURL = "invalid_url"
            case invalidExpiry = "invalid_expiry"
        }

        private let base: Base

        /// The URL has no host, or the signed URL could not be formed from it.
        public static let invalidURL = Code(base: .invalidURL)
        /// A presigned URL's lifetime is outside 1…604800 seconds (seven days), the range AWS accepts.
        public static let invalidExpiry = Code(base: .invalidExpiry)

        /// The code as snake_case text.
        public var description: String { self.base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for a person; it never holds a credential.
    public let message: String

    /// An error with its code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "SigV4Error(\(self.code)): \(self.message)" }
}
