import Crypto
import Foundation

/// Standard Webhooks signing: `webhook-signature: v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key
/// being the bytes the base64 after `whsec_` encodes; any Standard Webhooks library verifies it.
enum WebhookSignature {
    /// The `webhook-signature` value of one attempt.
    static func header(key: Data, id: String, timestamp: Int, body: Data) -> String {
        var message = Data("\(id).\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// A new endpoint secret: `whsec_` and base64 of 32 random bytes (`latchkey webhooks secret`).
    static func newSecret() -> String {
        "whsec_" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}
