import Foundation

/// Text assembled as UTF-8 bytes in one growing buffer: a presigned URL and its canonical request (and the server's
/// hand-written JSON answers) are built from dozens of pieces, and appending bytes costs far less than joining
/// `String`s.
package struct UTF8Text {
    package private(set) var bytes: [UInt8]

    package init(capacity: Int) {
        self.bytes = []
        self.bytes.reserveCapacity(capacity)
    }

    package var count: Int { self.bytes.count }

    package mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { self.bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ text: StaticString) {
        self.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func append(_ bytes: some Collection<UInt8>) { self.bytes.append(contentsOf: bytes) }

    package mutating func append(byte: UInt8) { self.bytes.append(byte) }

    /// Lowercase hexadecimal, two digits a byte.
    package mutating func appendHex(of data: some ContiguousBytes) {
        let digits: StaticString = "0123456789abcdef"
        data.withUnsafeBytes { raw in
            for byte in raw {
                self.bytes.append(digits.utf8Start[Int(byte >> 4)])
                self.bytes.append(digits.utf8Start[Int(byte & 0x0f)])
            }
        }
    }

    package var string: String { String(decoding: self.bytes, as: UTF8.self) }
}
