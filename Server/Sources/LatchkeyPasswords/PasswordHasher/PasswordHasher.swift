/// Hashes passwords into PHC strings and verifies passwords against them, telling when a stored hash should be
/// replaced by one at the current settings (rehash on login).
///
/// ```swift
/// let hasher = try PasswordHasher()                        // Argon2id, m=19456, t=2, p=1
/// let stored = hasher.hash(password)                       // "$argon2id$v=19$m=19456,t=2,p=1$…$…"
/// switch hasher.verify(password, against: stored) {
/// case .valid: signIn()
/// case .validNeedsRehash: signIn(); save(hasher.hash(password))
/// case .invalid: reject()
/// }
/// ```
///
/// Passwords are hashed as their UTF-8 bytes; normalise them (NFKC) before calling. Both calls block the thread for
/// the length of one hash (tens of milliseconds): run them off an event loop.
public struct PasswordHasher: Sendable {
    /// What ``verify(_:against:)`` found.
    public enum Verification: Sendable, Hashable {
        /// The password matches and the stored hash uses the current algorithm and parameters.
        case valid
        /// The password matches, but the stored hash uses another algorithm or other parameters: store a new hash.
        case validNeedsRehash
        /// The password does not match, or the stored string is malformed, unsupported or over the resource limits.
        case invalid
    }

    /// The algorithm and parameters new hashes use.
    public let algorithm: Algorithm
    /// The length of the random salt of new hashes.
    public let saltByteCount: Int

    /// Creates a hasher for new hashes at `algorithm`.
    ///
    /// - Throws: ``PasswordHashingError`` (``PasswordHashingError/Code/invalidParameters``) when the parameters are invalid
    ///   or over the limits that ``verify(_:against:)`` enforces (1 GiB, 10 Argon2 passes, 16 lanes, hashes of 4 to 64
    ///   bytes), or the salt is not 8 to 64 bytes.
    public init(algorithm: Algorithm = .owaspArgon2id, saltByteCount: Int = 16) throws {
        try algorithm.checkLimits()
        guard Limits.saltByteCounts.contains(saltByteCount) else {
            throw PasswordHashingError(.invalidParameters, "salts must be 8 to 64 bytes")
        }
        self.algorithm = algorithm
        self.saltByteCount = saltByteCount
    }

    /// The PHC string of `password` under a fresh random salt.
    public func hash(_ password: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<self.saltByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let hash: [UInt8]
        do {
            hash = try self.algorithm.derive(password: Array(password.utf8), salt: salt)
        } catch {
            // The parameters were checked in init; what is left is BoringSSL failing to allocate scrypt's memory.
            preconditionFailure("password hashing failed with checked parameters: \(error)")
        }
        return StoredPasswordHash(algorithm: self.algorithm, salt: salt, hash: hash).phcString
    }

    /// Whether `password` matches the stored PHC string `phc`, and whether that string should be replaced.
    ///
    /// The hashes are compared in constant time. A malformed string, an unsupported algorithm or version, and
    /// parameters over the limits (see ``init(algorithm:saltByteCount:)``) are ``Verification/invalid``, never a crash.
    public func verify(_ password: String, against phc: String) -> Verification {
        guard let stored = StoredPasswordHash(phc: phc),
            let computed = try? stored.algorithm.derive(password: Array(password.utf8), salt: stored.salt),
            constantTimeEquals(computed, stored.hash)
        else { return .invalid }
        return stored.algorithm == self.algorithm && stored.salt.count == self.saltByteCount ? .valid : .validNeedsRehash
    }
}
