import Foundation

/// The error document an AWS service (or an S3-compatible server) answers with.
///
/// Three shapes are read: the Query API's (STS, IAM) `<ErrorResponse><Error><Code>…</Code><Message>…</Message></Error>`,
/// S3's bare `<Error><Code>…</Code><Message>…</Message></Error>` (also what MinIO and SeaweedFS send for STS), and
/// EC2's `<Response><Errors><Error>…`.
package struct AWSErrorResponse: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code a program matches: `AccessDenied`, `NoSuchKey`, `ExpiredToken`, `SignatureDoesNotMatch`.
    package let code: String
    /// The server's explanation; empty when it sent none.
    package let message: String
    /// `Sender` or `Receiver` (Query API only): whose fault it was.
    package let type: String?
    /// The request ID, for the provider's support.
    package let requestID: String?

    package init(code: String, message: String, type: String? = nil, requestID: String? = nil) {
        self.code = code
        self.message = message
        self.type = type
        self.requestID = requestID
    }

    /// Reads an error document; throws ``ObjectStorageResponseError`` when `data` is not one.
    package static func parse(_ data: Data) throws -> AWSErrorResponse {
        let root = try ObjectStorageXMLElement.parse(data)
        guard let response = try AWSErrorResponse(root: root) else {
            throw ObjectStorageResponseError(.unexpectedDocument, "expected an AWS error document, found <\(root.name)>")
        }
        return response
    }

    /// The error that `root` describes, or `nil` when `root` is not an error document.
    package init?(root: ObjectStorageXMLElement) throws {
        let error: ObjectStorageXMLElement
        switch root.name {
        case "Error": error = root
        case "ErrorResponse": error = try root.requiredChild("Error")
        case "Response": error = try root.requiredChild("Errors").requiredChild("Error")
        default: return nil
        }
        self.code = try error.requiredText("Code").trimmingCharacters(in: .whitespacesAndNewlines)
        self.message = error.text("Message") ?? ""
        self.type = error.text("Type")
        self.requestID = root.text("RequestId") ?? error.text("RequestId") ?? root.text("RequestID")
    }

    /// The code and the message.
    package var description: String {
        "\(self.code): \(self.message)" + (self.requestID.map { " (request \($0))" } ?? "")
    }
}
