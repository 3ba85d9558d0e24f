import Crypto
import _CryptoExtras

/// scrypt (RFC 7914) through swift-crypto's `_CryptoExtras` (BoringSSL), for hashes stored before Argon2id and for
/// comparison.
public enum Scrypt {
    /// The cost and shape of an scrypt hash.
    public struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// log2 of the CPU/memory cost N (`ln` in PHC strings): N = 2^costExponent.
        public var costExponent: Int
        /// The block size r.
        public var blockSize: Int
        /// The parallelism p (computed sequentially by BoringSSL).
        public var parallelism: Int
        /// The derived key length in bytes.
        public var keyByteCount: Int

        /// Creates parameters; ``Scrypt/deriveKey(password:salt:parameters:)`` lets BoringSSL check their ranges.
        public init(costExponent: Int, blockSize: Int, parallelism: Int, keyByteCount: Int = 32) {
            self.costExponent = costExponent
            self.blockSize = blockSize
            self.parallelism = parallelism
            self.keyByteCount = keyByteCount
        }

        /// OWASP's scrypt setting: N=2^17, r=8, p=1, with a 32-byte key.
        public static let owasp = Parameters(costExponent: 17, blockSize: 8, parallelism: 1)

        public var description: String { "scrypt ln=\(self.costExponent),r=\(self.blockSize),p=\(self.parallelism) T=\(self.keyByteCount)" }
    }

    /// Derives `parameters.keyByteCount` bytes from `password` and `salt`.
    ///
    /// - Throws: ``PasswordHashingError`` with ``PasswordHashingError/Code/invalidParameters`` when the cost is out of range,
    ///   or ``PasswordHashingError/Code/derivationFailed`` when BoringSSL refuses (for example r > 16 with p = 1, which
    ///   exceeds the memory limit swift-crypto computes for it).
    public static func deriveKey(password: [UInt8], salt: [UInt8], parameters: Parameters) throws -> [UInt8] {
        guard (1...62).contains(parameters.costExponent), parameters.blockSize >= 1, parameters.parallelism >= 1,
            parameters.keyByteCount >= 1
        else {
            throw PasswordHashingError(.invalidParameters, "scrypt needs 1 ≤ ln ≤ 62, r ≥ 1, p ≥ 1 and a key of at least 1 byte")
        }
        do {
            let key = try KDF.Scrypt.deriveKey(
                from: password,
                salt: salt,
                outputByteCount: parameters.keyByteCount,
                rounds: 1 << parameters.costExponent,
                blockSize: parameters.blockSize,
                parallelism: parameters.parallelism
            )
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw PasswordHashingError(.derivationFailed, "BoringSSL's scrypt refused \(parameters)")
        }
    }
}
