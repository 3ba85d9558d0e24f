/// The path of a request a proxy asks about, in the one form rules are matched against.
///
/// A path is matched the way the app behind the proxy will read it, so no spelling reaches a route under another
/// route's rule: percent-encoded unreserved characters are decoded (`%61` is `a`, `%2E` is `.`), other escapes
/// kept with uppercase hex, empty segments (`//`) and `.` segments dropped, `..` removes the segment before it (never
/// above the root), and path parameters (`;…`, which some servers strip) are cut from each segment. Backslashes,
/// control characters and malformed escapes make the path unreadable, and so do an encoded slash or backslash (`%2F`,
/// `%5C`) and encoded control characters: nginx, and many apps, decode `%2F` into a separator after the check, so
/// `/api%2Fusers` would be checked as one segment and served as `/api/users`.
enum ForwardedPath {
    /// The normalised path of `uri` (a path with an optional query), or nil when it cannot be read.
    static func normalize(_ uri: String) -> String? {
        let path = uri.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard path.first == UInt8(ascii: "/"), let decoded = Self.decodeUnreserved(Array(path)) else { return nil }
        var segments: [String] = []
        for raw in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            let segment = raw.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            switch segment {
            case "", ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        return "/" + segments.joined(separator: "/")
    }

    /// Whether `path` (normalised) lies at or below `prefix` (normalised), on segment boundaries: `/api/edit` covers
    /// `/api/edit` and `/api/edit/42`, not `/api/editor`. Unless `caseSensitive`, letters match in either case
    /// (`/API/Edit` is covered too), as an app that routes case-insensitively reads them.
    static func covers(prefix: String, path: String, caseSensitive: Bool = true) -> Bool {
        guard caseSensitive else { return Self.covers(prefix: prefix.lowercased(), path: path.lowercased()) }
        return prefix == "/" || path == prefix || path.hasPrefix(prefix + "/")
    }

    private static func decodeUnreserved(_ bytes: [UInt8]) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte > 0x20, byte != 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 2 < bytes.count, let high = Self.hexValue(bytes[index + 1]), let low = Self.hexValue(bytes[index + 2]) else {
                return nil
            }
            let value = high << 4 | low
            guard value >= 0x20, value != 0x7F, value != UInt8(ascii: "/"), value != UInt8(ascii: "\\") else { return nil }
            if Self.isUnreserved(value) {
                output.append(value)
            } else {
                output += [UInt8(ascii: "%"), Self.hexDigit(high), Self.hexDigit(low)]
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10 }
}
