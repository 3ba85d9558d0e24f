import Foundation
import LatchkeySigV4
import NIOCore

/// A response body type that writes its own JSON: the exact bytes ``LatchkeyResponseEncoder`` would produce with
/// `JSONEncoder` (keys sorted, slashes not escaped, ISO 8601 dates), without Codable's cost on a route that must be
/// as fast as token verification. Tests compare both encodings of every conforming type.
package protocol JSONBodyWritable: Encodable {
    /// Writes the members, in the order `JSONEncoder`'s `.sortedKeys` puts them.
    func writeMembers(to writer: inout JSONBodyWriter)
}

extension JSONBodyWritable {
    /// The JSON object of this value.
    package func jsonBody(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var writer = JSONBodyWriter()
        self.writeMembers(to: &writer)
        return writer.finish(allocator: allocator)
    }
}

/// Writes one JSON object member by member, as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` and
/// `.iso8601` dates would; the caller gives the members in sorted order.
package struct JSONBodyWriter {
    private var text = UTF8Text(capacity: 1024)
    private var isFirst = true

    init() {
        self.text.append(byte: UInt8(ascii: "{"))
    }

    package mutating func member(_ name: StaticString, _ value: String) {
        self.name(name)
        self.string(value)
    }

    package mutating func member(_ name: StaticString, _ value: Int) {
        self.name(name)
        self.text.append(String(value))
    }

    package mutating func member(_ name: StaticString, _ value: Bool) {
        self.name(name)
        self.text.append(value ? "true" : "false")
    }

    /// A number as `JSONEncoder` writes a `Double`: Swift's shortest form without a trailing `.0` (`100`, `2.75`,
    /// `1e+16`). Finite values only (`JSONEncoder` refuses the others; budgets are finite).
    package mutating func member(_ name: StaticString, _ value: Double) {
        self.name(name)
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        self.text.append(text)
    }

    /// A nested object.
    package mutating func member(_ name: StaticString, _ value: some JSONBodyWritable) {
        self.name(name)
        self.object(value)
    }

    /// An array of objects.
    package mutating func member<Element: JSONBodyWritable>(_ name: StaticString, _ values: [Element]) {
        self.name(name)
        self.text.append(byte: UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { self.text.append(byte: UInt8(ascii: ",")) }
            self.object(value)
        }
        self.text.append(byte: UInt8(ascii: "]"))
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, fractions of a second dropped, as `.iso8601` writes it.
    package mutating func member(_ name: StaticString, _ value: Date) {
        self.name(name)
        self.string(SigV4Timestamp(value).iso8601 ?? value.formatted(.iso8601))
    }

    /// An object of strings, keys sorted by their UTF-8 bytes.
    package mutating func member(_ name: StaticString, _ value: [String: String]) {
        self.name(name)
        self.text.append(byte: UInt8(ascii: "{"))
        for (index, key) in value.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { self.text.append(byte: UInt8(ascii: ",")) }
            self.string(key)
            self.text.append(byte: UInt8(ascii: ":"))
            self.string(value[key] ?? "")
        }
        self.text.append(byte: UInt8(ascii: "}"))
    }

    mutating func finish(allocator: ByteBufferAllocator) -> ByteBuffer {
        self.text.append(byte: UInt8(ascii: "}"))
        var buffer = allocator.buffer(capacity: self.text.count)
        buffer.writeBytes(self.text.bytes)
        return buffer
    }

    private mutating func object(_ value: some JSONBodyWritable) {
        self.text.append(byte: UInt8(ascii: "{"))
        self.isFirst = true
        value.writeMembers(to: &self)
        self.text.append(byte: UInt8(ascii: "}"))
        self.isFirst = false
    }

    private mutating func name(_ name: StaticString) {
        if !self.isFirst { self.text.append(byte: UInt8(ascii: ",")) }
        self.isFirst = false
        self.text.append(byte: UInt8(ascii: "\""))
        self.text.append(name)
        self.text.append("\":")
    }

    /// A JSON string: `"` and `\` escaped, the control characters as `\b \t \n \f \r` or `\u00XX`, all else as it is.
    private mutating func string(_ value: String) {
        self.text.append(byte: UInt8(ascii: "\""))
        var value = value
        if !value.withUTF8({ $0.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } }) {
            self.text.append(value)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\""): self.text.append("\\\"")
                case UInt8(ascii: "\\"): self.text.append("\\\\")
                case 0x08: self.text.append("\\b")
                case 0x09: self.text.append("\\t")
                case 0x0a: self.text.append("\\n")
                case 0x0c: self.text.append("\\f")
                case 0x0d: self.text.append("\\r")
                case 0..<0x20: self.text.append([UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
                default: self.text.append(byte: byte)
                }
            }
        }
        self.text.append(byte: UInt8(ascii: "\""))
    }
}
