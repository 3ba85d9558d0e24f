import Crypto
import Foundation
import LatchkeyCBOR

extension SoftwareAuthenticator {
    private struct ClientData: Encodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool
    }

    /// Client data as a browser writes it, with the override's members in place of the real ones.
    func clientDataJSON(type: String, origin: String, challenge: [UInt8]) -> [UInt8] {
        let override = self.clientDataOverride
        let clientData = ClientData(
            type: override.type ?? type,
            challenge: Self.base64URLEncode(override.challenge ?? challenge),
            origin: override.origin ?? origin,
            crossOrigin: override.crossOrigin ?? false
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return Array(try! encoder.encode(clientData))
    }

    /// Authenticator data (WebAuthn §6.1): the RP ID hash, the flags, the counter, then the attested credential data
    /// and the extensions when there are any.
    func authenticatorData(rpID: String, userVerified: Bool, attestedCredentialData: [UInt8]?) -> [UInt8] {
        var flags: UInt8 = 0
        if self.userPresent { flags |= 0x01 }
        if userVerified { flags |= 0x04 }
        if self.backupEligible { flags |= 0x08 }
        if self.backedUp { flags |= 0x10 }
        if attestedCredentialData != nil { flags |= 0x40 }
        if self.extensions != nil { flags |= 0x80 }
        let counter = (0..<4).map { UInt8(truncatingIfNeeded: self.signCount >> (24 - 8 * $0)) }
        var data = Array(SHA256.hash(data: Array(rpID.utf8))) + [flags] + counter
        data += attestedCredentialData ?? []
        if let extensions = self.extensions { data += CBOREncoder.encode(extensions) }
        return data
    }

    /// Base64url without padding (RFC 4648 §5), as WebAuthn's JSON writes bytes.
    public static func base64URLEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded base64url text (an options JSON's `challenge`, say); `nil` when it is not that.
    public static func base64URLDecode(_ text: String) -> [UInt8]? {
        guard text.count % 4 != 1, !text.contains("="), !text.contains("+"), !text.contains("/") else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = standard + String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: padded).map { Array($0) }
    }
}
