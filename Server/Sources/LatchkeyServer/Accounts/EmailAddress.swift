import Foundation
import LatchkeySMTP

/// An email address read by an RFC 5322 addr-spec parser and normalised: surrounding white space trimmed, the domain
/// lowercased and written in ASCII (each internationalised label as IDNA punycode, `xn--…`).
///
/// The local part is kept as written (mail servers may treat its case as significant) and must be ASCII: a dot-atom
/// (`first.last+tag`) or a quoted string (`"john.doe"`). Domain literals (`user@[192.0.2.1]`), comments and obsolete
/// forms are refused, as is a domain without a dot, and whatever the SMTP client would refuse to mail (a space, `<` or
/// `>`, even quoted: ``MailAddress/validate(_:)``, the one rule for both). Two addresses are the same account when
/// their ``key``s (the whole address lowercased) are equal.
struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The normalised address, as stored and mailed.
    let address: String
    /// The address lowercased: how accounts are looked up, so `Ann@Example.com` and `ann@example.com` are one account.
    let key: String
    /// The local part (before the `@`), as written.
    let localPart: String

    /// The key sign-ins and their limits count `text` under: its address's ``key``, or the text lowercased when it is
    /// not an address (an unknown address and a malformed one are refused alike, after the same work).
    static func lookupKey(_ text: String) -> String {
        (try? EmailAddress(parsing: text))?.key ?? text.lowercased()
    }

    /// Why a text is not an address; the message says which rule.
    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    init(parsing text: String) throws(Invalid) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw Invalid(description: "The email address is empty.") }
        guard trimmed.unicodeScalars.count <= 320 else { throw Invalid(description: "The email address is too long.") }
        let scalars = Array(trimmed.unicodeScalars)
        let (local, rest) = try Self.localPart(scalars)
        guard rest.first == "@" else {
            throw Invalid(
                description: rest.isEmpty ? "The email address has no @ and domain." : "The email address has an unexpected character before its @.")
        }
        let domain = try Self.domain(String(String.UnicodeScalarView(rest.dropFirst())))
        let address = local + "@" + domain
        guard local.utf8.count <= 64 else { throw Invalid(description: "The part before the @ is longer than 64 characters.") }
        guard address.utf8.count <= 254 else { throw Invalid(description: "The email address is longer than 254 characters.") }
        // The SMTP client refuses what could break its envelope (a space or angle bracket in a quoted local part):
        // its own rule, applied here, so no address is accepted that could never be mailed.
        do { try MailAddress.validate(address) } catch {
            throw Invalid(description: "The email address cannot be mailed: \(error.message) (even between quotes).")
        }
        self.address = address
        self.key = address.lowercased()
        self.localPart = local
    }

    var description: String { self.address }

    /// RFC 5322 `atext`.
    private static func isAtext(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true
        default: "!#$%&'*+-/=?^_`{|}~".unicodeScalars.contains(scalar)
        }
    }

    /// The local part (a dot-atom or a quoted string) and what follows it.
    private static func localPart(_ scalars: [Unicode.Scalar]) throws(Invalid) -> (String, ArraySlice<Unicode.Scalar>) {
        if scalars.first == "\"" {
            var index = 1
            var text = "\""
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "\"" { return (text + "\"", scalars[(index + 1)...]) }
                if scalar == "\\" {
                    guard index + 1 < scalars.count, (0x20...0x7E).contains(scalars[index + 1].value) || scalars[index + 1] == "\t" else {
                        throw Invalid(description: "The quoted part of the email address has a bad escape.")
                    }
                    text.unicodeScalars.append(contentsOf: [scalar, scalars[index + 1]])
                    index += 2
                    continue
                }
                guard (0x20...0x7E).contains(scalar.value) else {
                    throw Invalid(description: "The part before the @ must be ASCII (addresses with other characters cannot be mailed yet).")
                }
                text.unicodeScalars.append(scalar)
                index += 1
            }
            throw Invalid(description: "The quoted part of the email address is not closed.")
        }
        var end = 0
        var previousWasDot = true
        while end < scalars.count, scalars[end] != "@" {
            let scalar = scalars[end]
            if scalar == "." {
                guard !previousWasDot else { throw Invalid(description: "The part before the @ cannot start with a dot or have two dots in a row.") }
                previousWasDot = true
            } else if Self.isAtext(scalar) {
                previousWasDot = false
            } else if scalar.value > 0x7E {
                throw Invalid(description: "The part before the @ must be ASCII (addresses with other characters cannot be mailed yet).")
            } else {
                throw Invalid(description: "The part before the @ has a character an address cannot have (\(Self.name(scalar))).")
            }
            end += 1
        }
        guard end > 0 else { throw Invalid(description: "The email address has nothing before its @.") }
        guard !previousWasDot else { throw Invalid(description: "The part before the @ cannot end with a dot.") }
        return (String(String.UnicodeScalarView(scalars[..<end])), scalars[end...])
    }

    private static func name(_ scalar: Unicode.Scalar) -> String {
        scalar.value < 0x21 || scalar.value == 0x7F ? "a space or control character" : "'\(Character(scalar))'"
    }

    /// The domain as lowercase ASCII host name labels.
    private static func domain(_ text: String) throws(Invalid) -> String {
        guard !text.isEmpty else { throw Invalid(description: "The email address has nothing after its @.") }
        guard !text.hasPrefix("[") else { throw Invalid(description: "Addresses at an IP address ([…]) are not accepted; use a domain name.") }
        // IDNA: the full stops of other scripts separate labels too; labels are compared lowercased, in NFC.
        let unified = text.precomposedStringWithCanonicalMapping.lowercased()
            .replacingOccurrences(of: "\u{3002}", with: ".").replacingOccurrences(of: "\u{FF0E}", with: ".")
            .replacingOccurrences(of: "\u{FF61}", with: ".")
        let labels = unified.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 2 else { throw Invalid(description: "The domain after the @ needs a dot (example.com).") }
        var ascii: [String] = []
        for label in labels {
            guard !label.isEmpty else {
                throw Invalid(description: "The domain after the @ has an empty label (two dots in a row, or a dot at an end).")
            }
            let encoded: String
            if label.unicodeScalars.allSatisfy(\.isASCII) {
                encoded = label
            } else {
                guard
                    label.unicodeScalars.allSatisfy({
                        $0.isASCII || $0.properties.isAlphabetic || $0.properties.numericType != nil || $0.properties.isGraphemeExtend
                    })
                else { throw Invalid(description: "The domain after the @ has a character a domain name cannot have.") }
                encoded = "xn--" + Punycode.encode(label)
            }
            guard encoded.utf8.count <= 63 else { throw Invalid(description: "A label of the domain is longer than 63 characters.") }
            guard encoded.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) else {
                throw Invalid(description: "The domain after the @ may only have letters, digits, hyphens and dots.")
            }
            guard !encoded.hasPrefix("-"), !encoded.hasSuffix("-") else {
                throw Invalid(description: "A label of the domain cannot start or end with a hyphen.")
            }
            ascii.append(encoded)
        }
        guard !(ascii.last!.allSatisfy(\.isNumber)) else { throw Invalid(description: "The domain after the @ cannot end in a number.") }
        return ascii.joined(separator: ".")
    }
}

extension EmailAddress {
    /// `address` as a person reads it: each `xn--` label of its domain in Unicode (`user@xn--bcher-kva.example` is
    /// `user@bücher.example`); a label that is not valid Punycode stays as it is.
    static func displayed(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return address }
        let labels = address[address.index(after: at)...].split(separator: ".", omittingEmptySubsequences: false).map { label in
            guard label.lowercased().hasPrefix("xn--"), let decoded = Punycode.decode(String(label.dropFirst(4))) else { return String(label) }
            return decoded
        }
        return address[...at] + labels.joined(separator: ".")
    }
}

/// Punycode (RFC 3492), the encoding of IDNA's `xn--` labels.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    /// `label`'s Unicode scalars, encoded (without the `xn--` prefix).
    static func encode(_ label: String) -> String {
        let input = label.unicodeScalars.map { Int($0.value) }
        var output = input.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = Self.initialN
        var delta = 0
        var bias = Self.initialBias
        while handled < input.count {
            let m = input.filter { $0 >= n }.min()!
            delta += (m - n) * (handled + 1)
            n = m
            for scalar in input {
                if scalar < n { delta += 1 }
                if scalar == n {
                    var q = delta
                    var k = Self.base
                    while true {
                        let t = k <= bias ? Self.tMin : (k >= bias + Self.tMax ? Self.tMax : k - bias)
                        if q < t { break }
                        output.append(Self.digit(t + (q - t) % (Self.base - t)))
                        q = (q - t) / (Self.base - t)
                        k += Self.base
                    }
                    output.append(Self.digit(q))
                    bias = Self.adapt(delta: delta, points: handled + 1, first: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    /// The Unicode label `encoded` (without the `xn--` prefix) stands for; nil when it is not valid Punycode.
    static func decode(_ encoded: String) -> String? {
        let input = Array(encoded.unicodeScalars)
        guard input.allSatisfy(\.isASCII) else { return nil }
        let delimiter = input.lastIndex(of: "-")
        var output = delimiter.map { Array(input[..<$0]).map { Int($0.value) } } ?? []
        var index = delimiter.map { $0 + 1 } ?? 0
        var n = Self.initialN
        var i = 0
        var bias = Self.initialBias
        while index < input.count {
            let oldI = i
            var weight = 1
            var k = Self.base
            while true {
                guard index < input.count, let value = Self.value(of: input[index]) else { return nil }
                index += 1
                guard value <= (Int(Int32.max) - i) / weight else { return nil }
                i += value * weight
                let t = k <= bias ? Self.tMin : (k >= bias + Self.tMax ? Self.tMax : k - bias)
                if value < t { break }
                guard weight <= Int(Int32.max) / (Self.base - t) else { return nil }
                weight *= Self.base - t
                k += Self.base
            }
            bias = Self.adapt(delta: i - oldI, points: output.count + 1, first: oldI == 0)
            guard i / (output.count + 1) <= Int(Int32.max) - n else { return nil }
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n >= Self.initialN, Unicode.Scalar(UInt32(n)) != nil else { return nil }
            output.insert(n, at: i)
            i += 1
        }
        var decoded = String.UnicodeScalarView()
        for value in output {
            guard let scalar = Unicode.Scalar(UInt32(value)) else { return nil }
            decoded.append(scalar)
        }
        return String(decoded)
    }

    private static func value(of scalar: Unicode.Scalar) -> Int? {
        switch scalar.value {
        case 0x30...0x39: Int(scalar.value) - 0x30 + 26
        case 0x41...0x5A: Int(scalar.value) - 0x41
        case 0x61...0x7A: Int(scalar.value) - 0x61
        default: nil
        }
    }

    private static func digit(_ value: Int) -> Character {
        Character(Unicode.Scalar(UInt8(value < 26 ? value + 0x61 : value - 26 + 0x30)))
    }

    private static func adapt(delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / Self.damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((Self.base - Self.tMin) * Self.tMax) / 2 {
            delta /= Self.base - Self.tMin
            k += Self.base
        }
        return k + (Self.base - Self.tMin + 1) * delta / (delta + Self.skew)
    }
}
