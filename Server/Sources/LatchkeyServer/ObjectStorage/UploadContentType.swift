import Foundation

/// The `Content-Type` a presigned PUT is signed with: one of `storage.allowed-content-types`, so an upload cannot be
/// served back from the bucket's origin as a page that runs script.
///
/// Types are compared by their essence (`type/subtype`, lowercased, parameters cut), so `TEXT/HTML; charset=utf-8` is
/// `text/html`. Types a browser renders as an active document (HTML, XHTML, SVG and other XML) are never served inline:
/// when the allowed list admits one (`text/*`, say), the upload is signed with `Content-Disposition: attachment` too.
struct UploadContentType: Equatable {
    /// The default of `storage.allowed-content-types`.
    static let defaultAllowed = ["image/*", "audio/*", "video/*", "application/octet-stream", "application/json", "application/zip"]
    /// What a PUT without `content_type` is signed with.
    static let unnamed = "application/octet-stream"

    /// The value signed and sent, as the client wrote it.
    let value: String
    /// `type/subtype`, lowercased.
    let essence: String

    /// Reads `text` and checks it against `allowed`; 400 with the envelope when it is no MIME type or not allowed.
    init(_ text: String, allowed: [String]) throws(ServiceError) {
        guard !text.isEmpty, text.utf8.count <= 256, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7e }),
            let essence = Self.essence(of: text)
        else { throw ServiceError.invalidRequest("content_type must be a MIME type (type/subtype, printable ASCII, at most 256 bytes).") }
        guard allowed.contains(where: { Self.pattern($0, admits: essence) }) else {
            throw ServiceError.invalidRequest(
                "Uploads of \(essence) are not allowed here; storage.allowed-content-types lists \(allowed.joined(separator: ", ")).")
        }
        self.value = text
        self.essence = essence
    }

    /// The headers the upload must send as signed: its `Content-Type`, and for an active document
    /// `Content-Disposition: attachment`, which the store keeps and serves with the object.
    var signedHeaders: [String: String] {
        var headers = ["Content-Type": self.value]
        if Self.isActiveDocument(self.essence) { headers["Content-Disposition"] = "attachment" }
        return headers
    }

    /// Whether a browser would render `essence` as a document that can run script.
    static func isActiveDocument(_ essence: String) -> Bool {
        ["text/html", "application/xhtml+xml", "text/xml", "application/xml"].contains(essence) || essence.hasSuffix("+xml")
    }

    /// `type/subtype` of a media type, lowercased; nil when it is not two tokens around a slash.
    static func essence(of text: String) -> String? {
        let bare = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let essence = bare.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(Self.isTokenCharacter) }) else { return nil }
        return essence
    }

    /// Whether an entry of `storage.allowed-content-types` (`type/subtype` or `type/*`) admits `essence`.
    static func pattern(_ pattern: String, admits essence: String) -> Bool {
        let pattern = pattern.lowercased()
        if pattern.hasSuffix("/*") { return essence.hasPrefix(pattern.dropLast()) }
        return pattern == essence
    }

    /// Whether `pattern` is an entry `storage.allowed-content-types` can hold.
    static func isValidPattern(_ pattern: String) -> Bool {
        let candidate = (pattern.hasSuffix("/*") ? String(pattern.dropLast()) + "x" : pattern).lowercased()
        return Self.essence(of: candidate) == candidate
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
        }
    }
}
