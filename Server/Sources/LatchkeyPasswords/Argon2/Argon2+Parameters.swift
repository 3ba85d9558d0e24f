extension Argon2 {
    /// The cost and shape of an Argon2 hash.
    public struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// Argon2d, Argon2i or Argon2id.
        public var variant: Variant
        /// Memory m in KiB (1024-byte blocks); at least 8 × ``parallelism``.
        public var memoryKibibytes: Int
        /// The number of passes t over memory, at least 1.
        public var iterations: Int
        /// The number of lanes p, 1 to 2^24-1.
        public var parallelism: Int
        /// The tag length T in bytes, at least 4.
        public var tagByteCount: Int

        /// Creates parameters; ``Argon2/hash(password:salt:parameters:secret:associatedData:)`` checks their ranges.
        public init(variant: Variant = .argon2id, memoryKibibytes: Int, iterations: Int, parallelism: Int, tagByteCount: Int = 32) {
            self.variant = variant
            self.memoryKibibytes = memoryKibibytes
            self.iterations = iterations
            self.parallelism = parallelism
            self.tagByteCount = tagByteCount
        }

        /// OWASP's Argon2id setting: m=19456 (19 MiB), t=2, p=1, with a 32-byte tag.
        public static let owasp = Parameters(variant: .argon2id, memoryKibibytes: 19_456, iterations: 2, parallelism: 1)
        /// OWASP's equivalent single-pass setting: m=47104 (46 MiB), t=1, p=1, with a 32-byte tag.
        public static let owaspSinglePass = Parameters(variant: .argon2id, memoryKibibytes: 47_104, iterations: 1, parallelism: 1)

        public var description: String {
            "\(self.variant.name) m=\(self.memoryKibibytes),t=\(self.iterations),p=\(self.parallelism) T=\(self.tagByteCount)"
        }

        /// Throws unless every parameter is within RFC 9106's ranges.
        func validate() throws {
            guard (1...0xFF_FFFF).contains(self.parallelism) else {
                throw PasswordHashingError(.invalidParameters, "Argon2 parallelism must be 1 to 2^24-1")
            }
            guard self.tagByteCount >= 4, self.tagByteCount <= UInt32.max else {
                throw PasswordHashingError(.invalidParameters, "Argon2 tags are 4 to 2^32-1 bytes")
            }
            guard self.memoryKibibytes >= 8 * self.parallelism, self.memoryKibibytes <= UInt32.max else {
                throw PasswordHashingError(.invalidParameters, "Argon2 memory must be 8 × parallelism to 2^32-1 KiB")
            }
            guard self.iterations >= 1, self.iterations <= UInt32.max else {
                throw PasswordHashingError(.invalidParameters, "Argon2 needs 1 to 2^32-1 iterations")
            }
        }
    }
}
