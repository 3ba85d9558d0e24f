/// The data codewords of a symbol (clause 7.4): one byte-mode segment — the mode indicator 0100, the byte count and
/// the bytes — then the terminator, zero bits to a codeword boundary and the pad codewords 0xEC and 0x11 in turn,
/// up to the data capacity of the version at the error-correction level.
struct DataCodewords {
    let bytes: [UInt8]
    let errorCorrection: QRCode.ErrorCorrection

    init(bytes data: [UInt8], version: SymbolVersion, errorCorrection: QRCode.ErrorCorrection) {
        precondition(data.count <= version.byteCapacity(at: errorCorrection))
        let capacity = version.dataCodewordCount(at: errorCorrection)
        var bits = BitWriter()
        bits.append(0b0100, count: 4)
        bits.append(data.count, count: version.byteCountBits)
        for byte in data {
            bits.append(Int(byte), count: 8)
        }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var bytes = bits.bytes
        for padIndex in 0..<(capacity - bytes.count) {
            bytes.append(padIndex % 2 == 0 ? 0xEC : 0x11)
        }
        self.bytes = bytes
        self.errorCorrection = errorCorrection
    }
}

/// Bits appended most significant first, read back as bytes.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count: Int) {
        precondition(count >= 0 && value >> count == 0, "\(value) does not fit \(count) bits")
        for shift in stride(from: count - 1, through: 0, by: -1) {
            if self.count % 8 == 0 { self.bytes.append(0) }
            if (value >> shift) & 1 == 1 {
                self.bytes[self.bytes.count - 1] |= 0x80 >> UInt8(self.count % 8)
            }
            self.count += 1
        }
    }
}
