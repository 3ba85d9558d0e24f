/// Writes CBOR items: arguments and lengths in preferred (shortest) form, map entries in the order given, floats as
/// double precision. It writes what it is given, including maps with duplicate keys; it is for tests and peers.
public struct CBOREncoder {
    /// The bytes of `value`.
    public static func encode(_ value: CBOR) -> [UInt8] {
        var bytes: [UInt8] = []
        Self.append(value, to: &bytes)
        return bytes
    }

    private static func append(_ value: CBOR, to bytes: inout [UInt8]) {
        switch value {
        case .unsigned(let number): Self.appendHead(majorType: 0, argument: number, to: &bytes)
        case .negative(let number): Self.appendHead(majorType: 1, argument: number, to: &bytes)
        case .bytes(let content):
            Self.appendHead(majorType: 2, argument: UInt64(content.count), to: &bytes)
            bytes += content
        case .text(let text):
            Self.appendHead(majorType: 3, argument: UInt64(text.utf8.count), to: &bytes)
            bytes += text.utf8
        case .array(let elements):
            Self.appendHead(majorType: 4, argument: UInt64(elements.count), to: &bytes)
            for element in elements { Self.append(element, to: &bytes) }
        case .map(let entries):
            Self.appendHead(majorType: 5, argument: UInt64(entries.count), to: &bytes)
            for entry in entries {
                Self.append(entry.key, to: &bytes)
                Self.append(entry.value, to: &bytes)
            }
        case .bool(let flag): bytes.append(flag ? 0xF5 : 0xF4)
        case .null: bytes.append(0xF6)
        case .undefined: bytes.append(0xF7)
        case .float(let number):
            bytes.append(0xFB)
            Self.appendBigEndian(number.bitPattern, byteCount: 8, to: &bytes)
        }
    }

    private static func appendHead(majorType: UInt8, argument: UInt64, to bytes: inout [UInt8]) {
        let type = majorType << 5
        switch argument {
        case 0...23: bytes.append(type | UInt8(argument))
        case 24...0xFF:
            bytes.append(type | 24)
            Self.appendBigEndian(argument, byteCount: 1, to: &bytes)
        case 0x100...0xFFFF:
            bytes.append(type | 25)
            Self.appendBigEndian(argument, byteCount: 2, to: &bytes)
        case 0x1_0000...0xFFFF_FFFF:
            bytes.append(type | 26)
            Self.appendBigEndian(argument, byteCount: 4, to: &bytes)
        default:
            bytes.append(type | 27)
            Self.appendBigEndian(argument, byteCount: 8, to: &bytes)
        }
    }

    private static func appendBigEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for index in stride(from: byteCount - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}
