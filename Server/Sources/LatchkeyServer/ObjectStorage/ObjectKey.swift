import Foundation
import LatchkeyAPI

/// An object key relative to a folder (a user's prefix, the assets prefix), checked so that prefix + key stays in
/// the folder: 1…1024 bytes; no leading `/`; no `.`, `..` or empty segments; no backslash; no control character; no
/// percent-encoded dot, slash or backslash (a store or proxy that decodes them would see `..`).
struct ObjectKey {
    /// The key as given, relative to its folder.
    let relative: String

    /// Checks `key`; 400 `invalid_key` saying why when it could leave its folder or is not a usable key.
    init(_ key: String, field: String = "key", allowEmpty: Bool = false, maxBytes: Int = 1024) throws {
        if key.isEmpty {
            guard allowEmpty else { throw Self.invalid("\(field) is empty: name an object below your folder, e.g. photos/1.jpg.") }
            self.relative = key
            return
        }
        // Byte and scalar scans rather than Foundation's string search: this runs on every presign.
        let bytes = key.utf8
        guard bytes.count <= maxBytes else { throw Self.invalid("\(field) is longer than \(maxBytes) bytes.") }
        guard bytes.first != UInt8(ascii: "/") else { throw Self.invalid("\(field) starts with /: keys are relative to your folder.") }
        guard !bytes.contains(UInt8(ascii: "\\")) else { throw Self.invalid("\(field) contains a backslash.") }
        guard !key.unicodeScalars.contains(where: Self.isControlOrFormat) else { throw Self.invalid("\(field) contains a control character.") }
        guard !Self.containsEncodedSeparator(bytes) else {
            throw Self.invalid("\(field) contains a percent-encoded dot, slash or backslash.")
        }
        let segments = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if !segment.isEmpty, segment.count <= 2, segment.allSatisfy({ $0 == UInt8(ascii: ".") }) {
                throw Self.invalid("\(field) contains a . or .. segment.")
            }
            // An empty segment (`a//b`) is refused; a trailing `/` (a folder) is fine where empty keys are (prefixes).
            if segment.isEmpty && !(allowEmpty && index == segments.count - 1) { throw Self.invalid("\(field) contains an empty segment (//).") }
        }
        self.relative = key
    }

    /// A control (Cc) or format (Cf) character; ASCII is decided without Unicode's tables.
    private static func isControlOrFormat(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7f }
        let category = scalar.properties.generalCategory
        return category == .control || category == .format
    }

    /// Whether `bytes` hold `%2E`, `%2F` or `%5C` in either case.
    private static func containsEncodedSeparator(_ bytes: String.UTF8View) -> Bool {
        var iterator = bytes.makeIterator()
        var previous: (UInt8, UInt8) = (0, 0)
        while let byte = iterator.next() {
            let lowered = byte | 0x20  // ASCII letters to lowercase; digits and `%` are unchanged by it.
            switch (previous.0, previous.1, lowered) {
            case (UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "e")), (UInt8(ascii: "%"), UInt8(ascii: "2"), UInt8(ascii: "f")),
                (UInt8(ascii: "%"), UInt8(ascii: "5"), UInt8(ascii: "c")):
                return true
            default: previous = (previous.1, byte)
            }
        }
        return false
    }

    private static func invalid(_ message: String) -> ServiceError { ServiceError.invalidRequest(message, code: .invalidKey) }
}
