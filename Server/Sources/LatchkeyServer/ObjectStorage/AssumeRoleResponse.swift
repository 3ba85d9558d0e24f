import Foundation

/// The temporary credentials STS answers `AssumeRole` with.
///
/// Also reads the same shape under the names of `AssumeRoleWithWebIdentity`, `AssumeRoleWithSAML`,
/// `GetSessionToken` and `GetFederationToken` (`<NameResponse><NameResult><Credentials>`), which MinIO's and
/// SeaweedFS's STS answer too. The secret key and the session token never show in `description` or `dump`.
package struct AssumeRoleResponse: Sendable {
    /// The temporary access key ID (`ASIA…`).
    package let accessKeyID: String
    /// The temporary secret access key.
    package let secretAccessKey: String
    /// The session token to send with every request signed by these credentials.
    package let sessionToken: String
    /// When the credentials stop working.
    package let expiration: Date
    /// `AssumedRoleUser/Arn`: the session's role ARN (`arn:aws:sts::123456789012:assumed-role/demo/session`).
    package let assumedRoleARN: String?
    /// `AssumedRoleUser/AssumedRoleId`: the role ID and the session name (`AROA…:session`).
    package let assumedRoleID: String?

    /// Reads an `AssumeRoleResponse`; throws the ``AWSErrorResponse`` when `data` is an error document, and
    /// ``ObjectStorageResponseError`` when it is malformed or lacks a credential part.
    package static func parse(_ data: Data) throws -> AssumeRoleResponse {
        let root = try ObjectStorageXMLElement.parse(data)
        if let error = try AWSErrorResponse(root: root) { throw error }
        let action = root.name.hasSuffix("Response") ? String(root.name.dropLast("Response".count)) : ""
        guard !action.isEmpty, let result = root.child("\(action)Result") else {
            throw ObjectStorageResponseError(.unexpectedDocument, "expected an STS credentials response, found <\(root.name)>")
        }
        let credentials = try result.requiredChild("Credentials")
        let user = result.child("AssumedRoleUser")
        return AssumeRoleResponse(
            accessKeyID: try Self.compacted(credentials.requiredText("AccessKeyId")),
            secretAccessKey: try Self.compacted(credentials.requiredText("SecretAccessKey")),
            sessionToken: try Self.compacted(credentials.requiredText("SessionToken")),
            expiration: try credentials.required("Expiration", credentials.date),
            assumedRoleARN: user?.text("Arn").flatMap(Self.nonEmpty),
            assumedRoleID: user?.text("AssumedRoleId").flatMap(Self.nonEmpty))
    }

    /// A key or token without whitespace: they are base64 and the like, so whitespace in them is only layout (AWS's
    /// documentation wraps the session token over several lines).
    private static func compacted(_ text: String) -> String {
        String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
    }

    private static func nonEmpty(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension AssumeRoleResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID, the expiry and the role; never the secret key nor the session token.
    package var description: String {
        "AssumeRoleResponse(accessKeyID: \(self.accessKeyID), expiration: \(self.expiration), assumedRoleARN: \(self.assumedRoleARN ?? "nil"), "
            + "<secrets redacted>)"
    }

    package var debugDescription: String { self.description }

    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                (label: "accessKeyID", value: self.accessKeyID as Any), (label: "expiration", value: self.expiration as Any),
                (label: "assumedRoleARN", value: self.assumedRoleARN as Any), (label: "assumedRoleID", value: self.assumedRoleID as Any),
            ],
            displayStyle: .struct)
    }
}
