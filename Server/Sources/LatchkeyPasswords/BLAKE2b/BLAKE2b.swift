/// BLAKE2b (RFC 7693): a hash with a digest of 1 to 64 bytes and an optional key of up to 64 bytes.
///
/// Argon2 builds on it; it is public so its test vectors can be checked on their own.
///
/// ```swift
/// var hasher = BLAKE2b(outputByteCount: 32)
/// hasher.update(Array("abc".utf8))
/// let digest = hasher.finalize()
/// ```
public struct BLAKE2b: Sendable {
    /// The longest digest BLAKE2b produces, in bytes.
    public static let maximumOutputByteCount = 64
    /// The longest key BLAKE2b takes, in bytes.
    public static let maximumKeyByteCount = 64
    static let blockByteCount = 128

    /// The length of the digest ``finalize()`` returns, in bytes.
    public let outputByteCount: Int
    private var chainValue: [UInt64]
    private var block: [UInt8]
    private var blockFill = 0
    private var counter: (low: UInt64, high: UInt64) = (0, 0)

    /// Starts a hash.
    ///
    /// - Parameters:
    ///   - outputByteCount: The digest length, 1 to ``maximumOutputByteCount`` bytes (a precondition).
    ///   - key: An optional key, at most ``maximumKeyByteCount`` bytes (a precondition); empty means unkeyed.
    public init(outputByteCount: Int = BLAKE2b.maximumOutputByteCount, key: [UInt8] = []) {
        precondition((1...Self.maximumOutputByteCount).contains(outputByteCount), "BLAKE2b digests are 1 to 64 bytes")
        precondition(key.count <= Self.maximumKeyByteCount, "BLAKE2b keys are at most 64 bytes")
        self.outputByteCount = outputByteCount
        self.chainValue = Self.initializationVector
        // The parameter block's first word: digest length, key length, fanout 1, depth 1 (sequential mode).
        self.chainValue[0] ^= 0x0101_0000 ^ (UInt64(key.count) << 8) ^ UInt64(outputByteCount)
        self.block = [UInt8](repeating: 0, count: Self.blockByteCount)
        if !key.isEmpty {
            // A key is hashed as a first block of its own, padded with zeros.
            self.block.replaceSubrange(0..<key.count, with: key)
            self.blockFill = Self.blockByteCount
        }
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            // The last block is compressed differently, so a full block waits until more input arrives.
            if self.blockFill == Self.blockByteCount {
                self.compressBlock(isLast: false)
            }
            let taken = min(Self.blockByteCount - self.blockFill, bytes.count - offset)
            let fill = self.blockFill
            self.block.withUnsafeMutableBytes { block in
                (block.baseAddress! + fill).copyMemory(from: source + offset, byteCount: taken)
            }
            self.blockFill += taken
            offset += taken
        }
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let contiguous = bytes as? [UInt8] ?? Array(bytes)
        contiguous.withUnsafeBytes { self.update($0) }
    }

    /// The digest of everything added so far; the hasher itself is left as it was.
    public func finalize() -> [UInt8] {
        var copy = self
        let fill = copy.blockFill
        copy.block.withUnsafeMutableBytes { block in
            _ = (block.baseAddress! + fill).initializeMemory(as: UInt8.self, repeating: 0, count: Self.blockByteCount - fill)
        }
        copy.compressBlock(isLast: true)
        var digest = [UInt8]()
        digest.reserveCapacity(Self.maximumOutputByteCount)
        for word in copy.chainValue {
            withUnsafeBytes(of: word.littleEndian) { digest.append(contentsOf: $0) }
        }
        return Array(digest.prefix(self.outputByteCount))
    }

    /// The digest of `message` in one call.
    public static func hash(_ message: some Sequence<UInt8>, outputByteCount: Int = maximumOutputByteCount, key: [UInt8] = []) -> [UInt8] {
        var hasher = BLAKE2b(outputByteCount: outputByteCount, key: key)
        hasher.update(message)
        return hasher.finalize()
    }

    private mutating func compressBlock(isLast: Bool) {
        let (low, overflow) = self.counter.low.addingReportingOverflow(UInt64(self.blockFill))
        self.counter = (low, self.counter.high &+ (overflow ? 1 : 0))
        self.block.withUnsafeBytes { block in
            self.chainValue.withUnsafeMutableBufferPointer { chainValue in
                Self.compress(chainValue: chainValue.baseAddress!, block: block, counter: self.counter, isLast: isLast)
            }
        }
        self.blockFill = 0
    }
}
