import Foundation
import LatchkeyAPI

/// An object key relative to a folder (a user's prefix, the assets prefix), checked so that prefix + key stays in
/// the folder: 1…1024 bytes; no leading `/`; no `.`, `..` or empty segments; no backslash; no control character; no
/// percent-encoded dot, slash or backslash (a store or proxy that decodes them would see `..`).
@available(LatchkeyServer 1.0, *)
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
        guard key.utf8.count <= maxBytes else { throw Self.invalid("\(field) is longer than \(maxBytes) bytes.") }
        guard !key.hasPrefix("/") else { throw Self.invalid("\(field) starts with /: keys are relative to your folder.") }
        guard !key.contains("\\") else { throw Self.invalid("\(field) contains a backslash.") }
        guard !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
        else { throw Self.invalid("\(field) contains a control character.") }
        let lowered = key.lowercased()
        guard !["%2e", "%2f", "%5c"].contains(where: lowered.contains) else {
            throw Self.invalid("\(field) contains a percent-encoded dot, slash or backslash.")
        }
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment == "." || segment == ".." { throw Self.invalid("\(field) contains a . or .. segment.") }
            // An empty segment (`a//b`) is refused; a trailing `/` (a folder) is fine where empty keys are (prefixes).
            if segment.isEmpty && !(allowEmpty && index == segments.count - 1) { throw Self.invalid("\(field) contains an empty segment (//).") }
        }
        self.relative = key
    }

    private static func invalid(_ message: String) -> APIError { APIError.badRequest(message, code: .invalidKey) }
}
