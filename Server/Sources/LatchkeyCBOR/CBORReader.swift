/// The decoder's walk through the input: a position, the items counted so far and the limits.
struct CBORReader {
    private let bytes: ArraySlice<UInt8>
    private let limits: CBORDecoder
    private var position: Int
    private var itemCount = 0

    init(bytes: ArraySlice<UInt8>, limits: CBORDecoder) {
        self.bytes = bytes
        self.limits = limits
        self.position = bytes.startIndex
    }

    /// How many bytes have been read.
    var consumed: Int { self.position - self.bytes.startIndex }

    private var remaining: Int { self.bytes.endIndex - self.position }

    /// One item, inside `depth` arrays and maps.
    mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
        let start = self.consumed
        self.itemCount += 1
        guard self.itemCount <= self.limits.maximumItems else { throw CBORError(.tooLarge, offset: start) }
        let initial = try self.readByte(itemStart: start)
        let majorType = initial >> 5
        let additional = initial & 0x1F
        if majorType == 6 { throw CBORError(.unsupportedTag, offset: start) }
        if majorType == 7 { return try self.readSimpleOrFloat(additional, itemStart: start) }
        if additional == 31 {
            throw CBORError(majorType >= 2 ? .indefiniteLength : .reserved, offset: start)
        }
        let argument = try self.readArgument(additional, itemStart: start)
        switch majorType {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(Array(try self.readString(length: argument, itemStart: start)))
        case 3:
            guard let text = String(validating: try self.readString(length: argument, itemStart: start), as: UTF8.self) else {
                throw CBORError(.invalidUTF8, offset: start)
            }
            return .text(text)
        case 4: return .array(try self.readArray(count: argument, depth: depth, itemStart: start))
        default: return .map(try self.readMap(count: argument, depth: depth, itemStart: start))
        }
    }

    private mutating func readByte(itemStart: Int) throws(CBORError) -> UInt8 {
        guard self.position < self.bytes.endIndex else { throw CBORError(.truncated, offset: itemStart) }
        defer { self.position += 1 }
        return self.bytes[self.position]
    }

    private mutating func readBytes(_ count: Int, itemStart: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= self.remaining else { throw CBORError(.truncated, offset: itemStart) }
        defer { self.position += count }
        return self.bytes[self.position..<self.position + count]
    }

    private mutating func readUnsigned(byteCount: Int, itemStart: Int) throws(CBORError) -> UInt64 {
        try self.readBytes(byteCount, itemStart: itemStart).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The argument of additional information 0 to 27 (RFC 8949 §3).
    private mutating func readArgument(_ additional: UInt8, itemStart: Int) throws(CBORError) -> UInt64 {
        switch additional {
        case 0...23: UInt64(additional)
        case 24: try self.readUnsigned(byteCount: 1, itemStart: itemStart)
        case 25: try self.readUnsigned(byteCount: 2, itemStart: itemStart)
        case 26: try self.readUnsigned(byteCount: 4, itemStart: itemStart)
        case 27: try self.readUnsigned(byteCount: 8, itemStart: itemStart)
        default: throw CBORError(.reserved, offset: itemStart)
        }
    }

    private mutating func readString(length: UInt64, itemStart: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard length <= UInt64(self.limits.maximumLength) else { throw CBORError(.tooLarge, offset: itemStart) }
        return try self.readBytes(Int(length), itemStart: itemStart)
    }

    /// Checks a declared count of items against the limits and the input before anything is reserved for them: each
    /// item takes at least one byte.
    private func checkCount(_ count: UInt64, bytesPerElement: UInt64, itemStart: Int) throws(CBORError) {
        guard count <= UInt64(self.limits.maximumItems) else { throw CBORError(.tooLarge, offset: itemStart) }
        guard count * bytesPerElement <= UInt64(self.remaining) else { throw CBORError(.truncated, offset: itemStart) }
    }

    private mutating func checkDepth(_ depth: Int, itemStart: Int) throws(CBORError) {
        guard depth < self.limits.maximumDepth else { throw CBORError(.tooDeep, offset: itemStart) }
    }

    private mutating func readArray(count: UInt64, depth: Int, itemStart: Int) throws(CBORError) -> [CBOR] {
        try self.checkDepth(depth, itemStart: itemStart)
        try self.checkCount(count, bytesPerElement: 1, itemStart: itemStart)
        var elements: [CBOR] = []
        elements.reserveCapacity(Int(count))
        for _ in 0..<count {
            elements.append(try self.readItem(depth: depth + 1))
        }
        return elements
    }

    private mutating func readMap(count: UInt64, depth: Int, itemStart: Int) throws(CBORError) -> [CBOR.Entry] {
        try self.checkDepth(depth, itemStart: itemStart)
        try self.checkCount(count, bytesPerElement: 2, itemStart: itemStart)
        var entries: [CBOR.Entry] = []
        entries.reserveCapacity(Int(count))
        var keys: Set<CBOR> = []
        for _ in 0..<count {
            let keyStart = self.consumed
            let key = try self.readItem(depth: depth + 1)
            guard keys.insert(key).inserted else { throw CBORError(.duplicateMapKey, offset: keyStart) }
            entries.append(CBOR.Entry(key: key, value: try self.readItem(depth: depth + 1)))
        }
        return entries
    }

    /// Major type 7 (RFC 8949 §3.3): false, true, null, undefined and floats; other simple values are refused.
    private mutating func readSimpleOrFloat(_ additional: UInt8, itemStart: Int) throws(CBORError) -> CBOR {
        switch additional {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0...19: throw CBORError(.unsupportedSimpleValue, offset: itemStart)
        case 24:
            _ = try self.readBytes(1, itemStart: itemStart)
            throw CBORError(.unsupportedSimpleValue, offset: itemStart)
        case 25: return .float(Self.halfPrecision(UInt16(try self.readUnsigned(byteCount: 2, itemStart: itemStart))))
        case 26: return .float(Double(Float(bitPattern: UInt32(try self.readUnsigned(byteCount: 4, itemStart: itemStart)))))
        case 27: return .float(Double(bitPattern: try self.readUnsigned(byteCount: 8, itemStart: itemStart)))
        case 31: throw CBORError(.unexpectedBreak, offset: itemStart)
        default: throw CBORError(.reserved, offset: itemStart)
        }
    }

    /// An IEEE 754 half-precision value (RFC 8949 Appendix D), without relying on `Float16`.
    private static func halfPrecision(_ bits: UInt16) -> Double {
        let exponent = Int(bits >> 10) & 0x1F
        let mantissa = Double(bits & 0x3FF)
        let magnitude: Double =
            switch exponent {
            case 0: mantissa * 0x1p-24
            case 31: mantissa == 0 ? .infinity : .nan
            default: (1 + mantissa / 1024) * Double(sign: .plus, exponent: exponent - 15, significand: 1)
            }
        return bits & 0x8000 == 0 ? magnitude : -magnitude
    }
}
