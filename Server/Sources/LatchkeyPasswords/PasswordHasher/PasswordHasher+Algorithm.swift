extension PasswordHasher {
    /// A password-hashing algorithm with its parameters, including the length of the stored hash.
    public enum Algorithm: Sendable, Hashable, CustomStringConvertible {
        /// Argon2 (normally Argon2id) at the given parameters.
        case argon2(Argon2.Parameters)
        /// scrypt at the given parameters.
        case scrypt(Scrypt.Parameters)

        /// Argon2id at OWASP's m=19456 KiB, t=2, p=1, with a 32-byte hash: what new hashes should use.
        public static let owaspArgon2id = Algorithm.argon2(.owasp)
        /// scrypt at OWASP's N=2^17, r=8, p=1, with a 32-byte hash.
        public static let owaspScrypt = Algorithm.scrypt(.owasp)

        public var description: String {
            switch self {
            case .argon2(let parameters): parameters.description
            case .scrypt(let parameters): parameters.description
            }
        }

        /// The hash of `password` with `salt`.
        func derive(password: [UInt8], salt: [UInt8]) throws -> [UInt8] {
            switch self {
            case .argon2(let parameters): try Argon2.hash(password: password, salt: salt, parameters: parameters)
            case .scrypt(let parameters): try Scrypt.deriveKey(password: password, salt: salt, parameters: parameters)
            }
        }

        /// Throws unless the parameters are within ``PasswordHasher``'s resource limits: at most 1 GiB of memory,
        /// 10 Argon2 passes, 16 lanes or scrypt parallelism, and hashes of 4 to 64 bytes.
        func checkLimits() throws {
            switch self {
            case .argon2(let parameters):
                try parameters.validate()
                guard parameters.memoryKibibytes <= Limits.memoryKibibytes, parameters.iterations <= Limits.argon2Iterations,
                    parameters.parallelism <= Limits.parallelism, Limits.hashByteCounts.contains(parameters.tagByteCount)
                else { throw PasswordHashingError(.invalidParameters, "\(parameters) is outside the resource limits") }
            case .scrypt(let parameters):
                // 128·r·N bytes of memory; r ≤ 16 because swift-crypto's memory limit refuses more when p = 1.
                guard (1...Limits.scryptCostExponent).contains(parameters.costExponent), (1...16).contains(parameters.blockSize),
                    (1...Limits.parallelism).contains(parameters.parallelism), Limits.hashByteCounts.contains(parameters.keyByteCount),
                    (128 * parameters.blockSize) << parameters.costExponent <= Limits.memoryKibibytes * 1024
                else { throw PasswordHashingError(.invalidParameters, "\(parameters) is outside the resource limits") }
            }
        }
    }

    /// Bounds on the parameters of any hash this hasher computes, so a stored string cannot ask for unbounded work.
    enum Limits {
        static let memoryKibibytes = 1 << 20
        static let argon2Iterations = 10
        static let scryptCostExponent = 20
        static let parallelism = 16
        static let hashByteCounts = 4...64
        static let saltByteCounts = 8...64
    }
}
