/// The Argon2 memory matrix: `lanes` rows of `laneLength` 1024-byte blocks in one contiguous allocation,
/// zeroed and freed when the value goes away.
struct Argon2Memory: ~Copyable {
    /// 64-bit words in a 1024-byte block.
    static let wordsPerBlock = 128
    /// Segments per lane, that is slices per pass (RFC 9106's synchronisation points).
    static let slices = 4

    let words: UnsafeMutablePointer<UInt64>
    /// Four blocks of working space: the compression's R, the address block, its input block, and a zero block.
    let scratch: UnsafeMutablePointer<UInt64>
    let lanes: Int
    let laneLength: Int
    let segmentLength: Int
    var blockCount: Int { self.lanes * self.laneLength }

    /// Allocates m' = 4p·⌊m / 4p⌋ blocks; parameters must already be validated.
    init(parameters: Argon2.Parameters) {
        self.lanes = parameters.parallelism
        let blockCount = 4 * self.lanes * (parameters.memoryKibibytes / (4 * self.lanes))
        self.laneLength = blockCount / self.lanes
        self.segmentLength = self.laneLength / Self.slices
        // Every block is written before it is read, so the big allocation needs no initial zeroing.
        self.words = Argon2Allocation.allocate(words: blockCount * Self.wordsPerBlock)
        self.scratch = .allocate(capacity: 4 * Self.wordsPerBlock)
        self.scratch.initialize(repeating: 0, count: 4 * Self.wordsPerBlock)
    }

    deinit {
        secureZero(self.words, byteCount: self.blockCount * Self.wordsPerBlock * 8)
        secureZero(self.scratch, byteCount: 4 * Self.wordsPerBlock * 8)
        Argon2Allocation.deallocate(self.words, words: self.blockCount * Self.wordsPerBlock)
        self.scratch.deallocate()
    }

    /// The first word of block `column` in `lane`.
    @inline(__always)
    func block(lane: Int, column: Int) -> UnsafeMutablePointer<UInt64> {
        self.words + (lane * self.laneLength + column) * Self.wordsPerBlock
    }

    /// B[i][0] and B[i][1] of every lane, from H0 (RFC 9106 §3.2 steps 3 and 4).
    func fillFirstBlocks(from initialHash: [UInt8]) {
        for lane in 0..<self.lanes {
            for column in 0..<2 {
                var bytes = Argon2.variableLengthHash(
                    initialHash + Argon2.littleEndian32(column) + Argon2.littleEndian32(lane),
                    outputByteCount: 1024
                )
                bytes.withUnsafeBytes { bytes in
                    let block = self.block(lane: lane, column: column)
                    for word in 0..<Self.wordsPerBlock {
                        block[word] = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * word, as: UInt64.self))
                    }
                }
                bytes.withUnsafeMutableBytes { secureZero($0.baseAddress!, byteCount: $0.count) }
            }
        }
    }

    /// The XOR of every lane's last block, as the little-endian bytes H' turns into the tag (RFC 9106 §3.2 step 7).
    func finalBlockBytes() -> [UInt8] {
        let final = self.scratch
        final.update(from: self.block(lane: 0, column: self.laneLength - 1), count: Self.wordsPerBlock)
        for lane in 1..<self.lanes {
            let last = self.block(lane: lane, column: self.laneLength - 1)
            for word in 0..<Self.wordsPerBlock { final[word] ^= last[word] }
        }
        var bytes = [UInt8](repeating: 0, count: Self.wordsPerBlock * 8)
        bytes.withUnsafeMutableBytes { bytes in
            for word in 0..<Self.wordsPerBlock {
                bytes.storeBytes(of: final[word].littleEndian, toByteOffset: 8 * word, as: UInt64.self)
            }
        }
        return bytes
    }
}
