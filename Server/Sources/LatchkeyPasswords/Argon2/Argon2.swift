/// Argon2 (RFC 9106), version 0x13, in pure Swift: Argon2id for passwords, with Argon2d and Argon2i alongside.
///
/// Lanes are computed one after another on the calling thread, so `parallelism` changes the result (as the RFC
/// requires) but not the speed. The call blocks for as long as the hash takes (tens of milliseconds at
/// ``Parameters/owasp``): run it off an event loop.
public enum Argon2 {
    /// The version this implementation computes (v=19 in PHC strings).
    public static let version: UInt32 = 0x13

    /// Which way reference blocks are chosen (RFC 9106 §3.4).
    public enum Variant: UInt32, Sendable, Hashable, CaseIterable {
        /// Data-dependent addressing: fastest to compute, but open to side channels.
        case argon2d = 0
        /// Data-independent addressing.
        case argon2i = 1
        /// Argon2i for the first half of the first pass, Argon2d after it: the RFC's and OWASP's choice for passwords.
        case argon2id = 2

        /// The name used in PHC strings: `argon2d`, `argon2i` or `argon2id`.
        public var name: String {
            switch self {
            case .argon2d: "argon2d"
            case .argon2i: "argon2i"
            case .argon2id: "argon2id"
            }
        }
    }

    /// Computes the Argon2 tag of `password`.
    ///
    /// - Parameters:
    ///   - password: The message P (for passwords, their UTF-8 bytes).
    ///   - salt: The nonce S, at least 8 bytes (16 random bytes are recommended).
    ///   - parameters: Variant, memory, passes, lanes and tag length.
    ///   - secret: The optional key K (a pepper).
    ///   - associatedData: The optional associated data X.
    /// - Returns: The tag, `parameters.tagByteCount` bytes.
    /// - Throws: ``PasswordHashingError`` with code ``PasswordHashingError/Code/invalidParameters`` when a length or a
    ///   parameter is outside RFC 9106's ranges.
    ///
    /// The memory is allocated for the call and zeroed before it is released; the call traps when the system cannot
    /// provide it, so bound `memoryKibibytes` for untrusted parameters (``PasswordHasher`` allows at most 1 GiB).
    public static func hash(
        password: [UInt8],
        salt: [UInt8],
        parameters: Parameters,
        secret: [UInt8] = [],
        associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try parameters.validate()
        try Self.checkLength(salt, "salt", minimum: 8)
        try Self.checkLength(password, "password", minimum: 0)
        try Self.checkLength(secret, "secret", minimum: 0)
        try Self.checkLength(associatedData, "associated data", minimum: 0)

        let initialHash = Self.initialHash(
            password: password,
            salt: salt,
            secret: secret,
            associatedData: associatedData,
            parameters: parameters
        )
        let memory = Argon2Memory(parameters: parameters)
        memory.fillFirstBlocks(from: initialHash)
        memory.fill(variant: parameters.variant, passes: parameters.iterations)
        return Self.variableLengthHash(memory.finalBlockBytes(), outputByteCount: parameters.tagByteCount)
    }

    private static func checkLength(_ bytes: [UInt8], _ name: String, minimum: Int) throws {
        guard bytes.count >= minimum, bytes.count <= UInt32.max else {
            throw PasswordHashingError(.invalidParameters, "the Argon2 \(name) must be \(minimum) to 2^32-1 bytes long")
        }
    }
}
