/// An AWS access key: long-lived (an IAM user's) or temporary (from STS, with a session token).
///
/// The secret access key and the session token never show in `description`, `debugDescription`, `dump` or string
/// interpolation: only the access key ID does, so credentials cannot reach a log line or an error message by accident.
public struct AWSCredentials: Sendable {
    /// The access key ID (`AKIA…` for a long-lived key, `ASIA…` for a temporary one); not a secret.
    public let accessKeyID: String
    /// The secret access key that derives the signing keys.
    public let secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`; `nil` for a long-lived key.
    public let sessionToken: String?

    /// Credentials from their three parts.
    ///
    /// - Parameters:
    ///   - accessKeyID: The access key ID.
    ///   - secretAccessKey: The secret access key.
    ///   - sessionToken: The session token of temporary credentials, if any.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

extension AWSCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID and whether a session token is present; never the secret key nor the token.
    public var description: String {
        "AWSCredentials(accessKeyID: \(self.accessKeyID), hasSessionToken: \(self.sessionToken != nil), <secrets redacted>)"
    }

    /// The same as ``description``.
    public var debugDescription: String { self.description }

    /// Only the harmless fields, so `dump` and debuggers show no secret either.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                (label: "accessKeyID", value: self.accessKeyID as Any),
                (label: "hasSessionToken", value: (self.sessionToken != nil) as Any),
            ],
            displayStyle: .struct
        )
    }
}
