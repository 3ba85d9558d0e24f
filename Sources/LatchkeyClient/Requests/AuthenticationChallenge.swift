/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme and its parameters, or its token68.
///
/// `Bearer realm="api", error="invalid_token"` is the scheme `bearer` with `realm` and `error`; a header may hold several
/// challenges (`Basic realm="x", Bearer error=invalid_token`), values may be tokens or quoted strings.
struct AuthenticationChallenge: Equatable, Sendable {
    /// The scheme, lowercase (schemes compare case-insensitively).
    var scheme: String
    /// The parameters by lowercase name (names compare case-insensitively), values unquoted; the first of a repeated name.
    var parameters: [String: String] = [:]
    /// The token68 form's value (`Basic dXNlcg==`), if the challenge has one instead of parameters.
    var token68: String?

    /// The challenges of a `WWW-Authenticate` value; parsing stops at the first thing that is not one (what came before is
    /// kept).
    static func parse(_ header: String) -> [AuthenticationChallenge] {
        var scanner = ChallengeScanner(Array(header.utf8))
        var challenges: [AuthenticationChallenge] = []
        while true {
            scanner.skipListSeparators()
            guard let scheme = scanner.token() else { return challenges }
            var challenge = AuthenticationChallenge(scheme: scheme.lowercased())
            scanner.skipSpaces()
            let start = scanner.position
            if let token68 = scanner.token68(), scanner.isAtElementEnd {
                challenge.token68 = token68
                challenges.append(challenge)
                continue
            }
            scanner.position = start
            let complete = scanner.parameters(into: &challenge.parameters)
            challenges.append(challenge)
            if !complete { return challenges }
        }
    }
}

/// Reads the pieces of a `WWW-Authenticate` value.
private struct ChallengeScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { self.position < self.bytes.count ? self.bytes[self.position] : nil }

    /// Whether only spaces stand between here and the end of the value or the next `,`.
    var isAtElementEnd: Bool {
        var index = self.position
        while index < self.bytes.count, Self.isSpace(self.bytes[index]) { index += 1 }
        return index == self.bytes.count || self.bytes[index] == UInt8(ascii: ",")
    }

    mutating func skipSpaces() {
        while let byte = self.current, Self.isSpace(byte) { self.position += 1 }
    }

    /// Skips spaces and commas (a list may have empty elements).
    mutating func skipListSeparators() {
        while let byte = self.current, Self.isSpace(byte) || byte == UInt8(ascii: ",") { self.position += 1 }
    }

    /// `1*tchar`.
    mutating func token() -> String? {
        let start = self.position
        while let byte = self.current, Self.isTokenCharacter(byte) { self.position += 1 }
        return self.position > start ? String(decoding: self.bytes[start..<self.position], as: UTF8.self) : nil
    }

    /// `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    mutating func token68() -> String? {
        let start = self.position
        while let byte = self.current, Self.isAlphanumeric(byte) || "-._~+/".utf8.contains(byte) { self.position += 1 }
        guard self.position > start else { return nil }
        while self.current == UInt8(ascii: "=") { self.position += 1 }
        return String(decoding: self.bytes[start..<self.position], as: UTF8.self)
    }

    /// `DQUOTE *( qdtext / quoted-pair ) DQUOTE`, unquoted; `nil` (and nothing read) unless one is complete here.
    mutating func quotedString() -> String? {
        guard self.current == UInt8(ascii: "\"") else { return nil }
        var index = self.position + 1
        var value: [UInt8] = []
        while index < self.bytes.count {
            switch self.bytes[index] {
            case UInt8(ascii: "\""):
                self.position = index + 1
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\") where index + 1 < self.bytes.count:
                value.append(self.bytes[index + 1])
                index += 2
            default:
                value.append(self.bytes[index])
                index += 1
            }
        }
        return nil
    }

    /// Reads `#auth-param` into `parameters`, up to the next challenge (a token not followed by `=`) or the end; `false`
    /// when it met something that is neither.
    mutating func parameters(into parameters: inout [String: String]) -> Bool {
        while true {
            let start = self.position
            guard let name = self.token() else { return self.current == nil || self.current == UInt8(ascii: ",") }
            self.skipSpaces()
            guard self.current == UInt8(ascii: "=") else {
                self.position = start  // the next challenge's scheme
                return true
            }
            self.position += 1
            self.skipSpaces()
            guard let value = self.quotedString() ?? self.token() else { return false }
            if parameters[name.lowercased()] == nil { parameters[name.lowercased()] = value }
            self.skipSpaces()
            guard self.current != nil else { return true }
            guard self.current == UInt8(ascii: ",") else { return false }
            self.skipListSeparators()
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool { Self.isAlphanumeric(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte) }
}
