/// A request body type that reads its plainest form itself: a JSON object whose members are all strings of printable
/// ASCII, with no escapes but `\/`, `\"` and `\\`, as the SDK (`JSONEncoder` writes `\/`) and most clients send. Anything else (escapes, other types, unknown or repeated
/// members, malformed JSON) is left to `JSONDecoder`, so the value and every error stay `JSONDecoder`'s; tests check
/// that whatever the fast path reads, `JSONDecoder` reads alike.
package protocol PlainJSONDecodable: Decodable {
    /// The value these members make, or `nil` to leave the body to `JSONDecoder`.
    init?(plainMembers: [(name: String, value: String)])
}

extension PlainJSONDecodable {
    /// The value of `body` when it is a plain object (see ``PlainJSONDecodable``), else `nil`.
    package init?(plainJSON body: UnsafeRawBufferPointer) {
        guard let members = PlainJSONObject.members(of: body) else { return nil }
        self.init(plainMembers: members)
    }
}

/// The reader of ``PlainJSONDecodable``'s plain objects.
enum PlainJSONObject {
    /// `{"name": "value", …}` with JSON's whitespace anywhere between tokens; `nil` for anything else.
    static func members(of body: UnsafeRawBufferPointer) -> [(name: String, value: String)]? {
        var index = body.startIndex
        func skipWhitespace() {
            while index < body.endIndex, [0x20, 0x09, 0x0a, 0x0d].contains(body[index]) { index += 1 }
        }
        func expect(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < body.endIndex, body[index] == byte else { return false }
            index += 1
            return true
        }
        func string() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            let start = index
            var escaped = false
            while index < body.endIndex, body[index] != UInt8(ascii: "\"") {
                // Printable ASCII only, and three escapes: anything else is JSONDecoder's to read (or refuse).
                guard (0x20..<0x80).contains(body[index]) else { return nil }
                if body[index] == UInt8(ascii: "\\") {
                    guard index + 1 < body.endIndex, [UInt8(ascii: "/"), UInt8(ascii: "\""), UInt8(ascii: "\\")].contains(body[index + 1])
                    else { return nil }
                    escaped = true
                    index += 1
                }
                index += 1
            }
            guard index < body.endIndex else { return nil }
            let raw = UnsafeRawBufferPointer(rebasing: body[start..<index])
            index += 1
            guard escaped else { return String(decoding: raw, as: UTF8.self) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(raw.count)
            var afterBackslash = false
            for byte in raw {
                if byte == UInt8(ascii: "\\") && !afterBackslash {
                    afterBackslash = true
                } else {
                    bytes.append(byte)
                    afterBackslash = false
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var members: [(name: String, value: String)] = []
        skipWhitespace()
        if index < body.endIndex, body[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            repeat {
                guard let name = string(), expect(UInt8(ascii: ":")), let value = string() else { return nil }
                members.append((name, value))
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "}")) else { return nil }
        }
        skipWhitespace()
        return index == body.endIndex ? members : nil
    }
}
