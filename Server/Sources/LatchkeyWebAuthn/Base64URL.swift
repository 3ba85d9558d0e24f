import Foundation

/// Base64url without padding (RFC 4648 §5), as WebAuthn writes challenges into client data.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension Sequence<UInt8> {
    /// Whether two byte sequences are equal, in a time that depends only on their lengths.
    func constantTimeEquals(_ other: some Sequence<UInt8>) -> Bool {
        let (mine, theirs) = (Array(self), Array(other))
        guard mine.count == theirs.count else { return false }
        return zip(mine, theirs).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
