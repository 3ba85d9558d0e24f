import Foundation
import LatchkeySigV4
import NIOCore

/// A response body type that writes its own JSON: the exact bytes ``LatchkeyResponseEncoder`` would produce with
/// `JSONEncoder` (keys sorted, slashes not escaped, ISO 8601 dates), without Codable's cost on a route that must be
/// as fast as token verification. Tests compare both encodings of every conforming type.
@available(LatchkeyServer 1.0, *)
package protocol JSONBodyWritable: Encodable {
    /// Writes the members, in the order `JSONEncoder`'s `.sortedKeys` puts them.
    func writeMembers(to writer: inout JSONBodyWriter)
}

@available(LatchkeyServer 1.0, *)
extension JSONBodyWritable {
    /// The JSON object of this value.
    package func jsonBody(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var writer = JSONBodyWriter(allocator: allocator)
        self.writeMembers(to: &writer)
        return writer.finish()
    }
}

/// Writes one JSON object member by member, as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` and
/// `.iso8601` dates would; the caller gives the members in sorted order.
@available(LatchkeyServer 1.0, *)
package struct JSONBodyWriter {
    private var buffer: ByteBuffer
    private var isFirst = true

    init(allocator: ByteBufferAllocator) {
        self.buffer = allocator.buffer(capacity: 512)
        self.buffer.writeInteger(UInt8(ascii: "{"))
    }

    package mutating func member(_ name: StaticString, _ value: String) {
        self.name(name)
        self.string(value)
    }

    package mutating func member(_ name: StaticString, _ value: Int) {
        self.name(name)
        self.buffer.writeString(String(value))
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, fractions of a second dropped, as `.iso8601` writes it.
    package mutating func member(_ name: StaticString, _ value: Date) {
        self.name(name)
        self.string(SigV4Timestamp(value).iso8601 ?? value.formatted(.iso8601))
    }

    /// An object of strings, keys sorted by their UTF-8 bytes.
    package mutating func member(_ name: StaticString, _ value: [String: String]) {
        self.name(name)
        self.buffer.writeInteger(UInt8(ascii: "{"))
        for (index, key) in value.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { self.buffer.writeInteger(UInt8(ascii: ",")) }
            self.string(key)
            self.buffer.writeInteger(UInt8(ascii: ":"))
            self.string(value[key] ?? "")
        }
        self.buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// A member left out when `nil`, as `encodeIfPresent` does.
    package mutating func member<Value>(_ name: StaticString, _ value: Value?, _ write: (inout Self, StaticString, Value) -> Void) {
        if let value { write(&self, name, value) }
    }

    mutating func finish() -> ByteBuffer {
        self.buffer.writeInteger(UInt8(ascii: "}"))
        return self.buffer
    }

    private mutating func name(_ name: StaticString) {
        if !self.isFirst { self.buffer.writeInteger(UInt8(ascii: ",")) }
        self.isFirst = false
        self.buffer.writeInteger(UInt8(ascii: "\""))
        self.buffer.writeStaticString(name)
        self.buffer.writeString("\":")
    }

    /// A JSON string: `"` and `\` escaped, the control characters as `\b \t \n \f \r` or `\u00XX`, all else as it is.
    private mutating func string(_ text: String) {
        self.buffer.writeInteger(UInt8(ascii: "\""))
        var text = text
        if !text.withUTF8({ $0.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } }) {
            self.buffer.writeString(text)
        } else {
            let hex = Array("0123456789abcdef".utf8)
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): self.buffer.writeString("\\\"")
                case UInt8(ascii: "\\"): self.buffer.writeString("\\\\")
                case 0x08: self.buffer.writeString("\\b")
                case 0x09: self.buffer.writeString("\\t")
                case 0x0a: self.buffer.writeString("\\n")
                case 0x0c: self.buffer.writeString("\\f")
                case 0x0d: self.buffer.writeString("\\r")
                case 0..<0x20: self.buffer.writeBytes([UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
                default: self.buffer.writeInteger(byte)
                }
            }
        }
        self.buffer.writeInteger(UInt8(ascii: "\""))
    }
}
