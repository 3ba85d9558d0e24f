/// One of the forty symbol versions and what ISO/IEC 18004 fixes for it: its size, its alignment patterns and how
/// many codewords it holds.
struct SymbolVersion: Hashable {
    /// 1 to 40.
    let number: Int

    init(_ number: Int) {
        precondition((1...40).contains(number), "QR code versions are 1 to 40")
        self.number = number
    }

    /// The smallest version whose byte-mode capacity at `level` is at least `byteCount`, or `nil` when none is.
    static func smallest(holding byteCount: Int, at level: QRCode.ErrorCorrection) -> SymbolVersion? {
        (1...40).lazy.map(SymbolVersion.init).first { $0.byteCapacity(at: level) >= byteCount }
    }

    /// The width and height in modules.
    var size: Int { 4 * self.number + 17 }

    /// The row (and column) numbers of the alignment patterns' centres, as annex E's table lists them: 6, then
    /// evenly spaced by an even step up to `size - 7`, the gap after 6 taking what is left over.
    var alignmentPatternCentres: [Int] {
        guard self.number > 1 else { return [] }
        let count = self.number / 7 + 2
        let step = self.number == 32 ? 26 : (self.number * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        return [6] + (0..<(count - 1)).map { self.size - 7 - $0 * step }.reversed()
    }

    /// The modules left for codewords once the function patterns, the format and the version information are placed;
    /// 0, 3, 4 or 7 of them are remainder bits.
    var dataModuleCount: Int {
        var count = (16 * self.number + 128) * self.number + 64
        if self.number >= 2 {
            let alignment = self.number / 7 + 2
            count -= (25 * alignment - 10) * alignment - 55
            if self.number >= 7 { count -= 36 }
        }
        return count
    }

    /// Data and error-correction codewords together.
    var totalCodewordCount: Int { self.dataModuleCount / 8 }

    /// The error-correction blocks at `level`.
    func blocks(at level: QRCode.ErrorCorrection) -> BlockLayout {
        let table = ErrorCorrectionTable.entries(for: level)[self.number - 1]
        return BlockLayout(totalCodewords: self.totalCodewordCount, blockCount: table.blocks, errorCorrectionPerBlock: table.codewordsPerBlock)
    }

    /// The number of data codewords at `level`.
    func dataCodewordCount(at level: QRCode.ErrorCorrection) -> Int {
        self.blocks(at: level).dataCodewordCount
    }

    /// The bits of byte mode's character count indicator: 8 up to version 9, 16 from version 10.
    var byteCountBits: Int { self.number <= 9 ? 8 : 16 }

    /// The most bytes one byte-mode segment can hold at `level`.
    func byteCapacity(at level: QRCode.ErrorCorrection) -> Int {
        (self.dataCodewordCount(at: level) * 8 - 4 - self.byteCountBits) / 8
    }

    /// The final message: `data` cut into blocks, each followed by its Reed–Solomon codewords, then interleaved —
    /// the first codeword of every block, then the second, and so on, data before error correction.
    func codewords(for data: DataCodewords) -> [UInt8] {
        let layout = self.blocks(at: data.errorCorrection)
        precondition(data.bytes.count == layout.dataCodewordCount)
        let encoder = ReedSolomonEncoder(degree: layout.errorCorrectionPerBlock)
        var dataBlocks: [ArraySlice<UInt8>] = []
        var start = 0
        for index in 0..<layout.blockCount {
            let length = layout.dataCodewordCount(ofBlock: index)
            dataBlocks.append(data.bytes[start..<(start + length)])
            start += length
        }
        let errorBlocks = dataBlocks.map(encoder.remainder(of:))
        var result: [UInt8] = []
        result.reserveCapacity(self.totalCodewordCount)
        for column in 0..<(dataBlocks.map(\.count).max() ?? 0) {
            for block in dataBlocks where column < block.count {
                result.append(block[block.startIndex + column])
            }
        }
        for column in 0..<layout.errorCorrectionPerBlock {
            for block in errorBlocks {
                result.append(block[column])
            }
        }
        return result
    }
}

/// How a version's codewords split into error-correction blocks: the blocks differ by at most one data codeword,
/// the shorter ones first.
struct BlockLayout: Hashable {
    let totalCodewords: Int
    let blockCount: Int
    let errorCorrectionPerBlock: Int

    /// All data codewords of all blocks.
    var dataCodewordCount: Int { self.totalCodewords - self.blockCount * self.errorCorrectionPerBlock }

    /// The data codewords of block `index` (from 0).
    func dataCodewordCount(ofBlock index: Int) -> Int {
        let shortBlocks = self.blockCount - self.totalCodewords % self.blockCount
        let shortLength = self.totalCodewords / self.blockCount - self.errorCorrectionPerBlock
        return index < shortBlocks ? shortLength : shortLength + 1
    }
}
