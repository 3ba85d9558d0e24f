import Foundation
import LatchkeyAPI
import LatchkeyClient

extension Samples {
    /// Credentials number `n`, issued at `issuedAt` for `lifetime` seconds; each of its secrets names `n`.
    static func storageCredentials(_ n: Int, issuedAt: Date, lifetime: Int = 3600) -> StorageCredentials {
        StorageCredentials(
            accessKeyID: "ASIAKEY\(n)", secretAccessKey: "secret-access-key-\(n)", sessionToken: "session-token-\(n)",
            expiration: issuedAt.addingTimeInterval(TimeInterval(lifetime)), expiresIn: lifetime, bucket: "photos", region: "us-east-1",
            endpoint: "https://s3.us-east-1.amazonaws.com", prefix: "users/user/")
    }

    /// An unsigned JWT whose payload is `{"sub": subject}`, as an identity provider's token reads to the SDK.
    static func providerToken(subject: String, _ n: Int = 1) -> String {
        let payload = Data(#"{"sub":"\#(subject)","n":\#(n)}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "eyJhbGciOiJub25lIn0.\(payload).signature"
    }
}

/// A value a stub handler and its test share.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { self.stored = value }

    var value: Value {
        get { self.lock.withLock { self.stored } }
        set { self.lock.withLock { self.stored = newValue } }
    }
}
