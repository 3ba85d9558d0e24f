/// Why a hash could not be computed: parameters out of range, or the scrypt implementation failing.
///
/// Programs match ``code``; ``description`` is for people and never contains a password or a hash.
public struct PasswordHashingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, matchable kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let description: String

        /// A parameter (memory, iterations, lanes, lengths) is outside what the algorithm or our limits allow.
        public static let invalidParameters = Code(description: "invalidParameters")
        /// The key derivation itself failed (BoringSSL refused the scrypt call).
        public static let derivationFailed = Code(description: "derivationFailed")
    }

    /// What went wrong.
    public let code: Code
    /// Which rule was broken, for logs.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(self.code): \(self.reason)" }
}
