/// Why an STS or S3 response body could not be read. Programs match ``code``; ``message`` is for people and never
/// holds a credential (only element paths, and the offending text of dates, numbers and booleans).
package struct ObjectStorageResponseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    package enum Code: String, Sendable, Hashable {
        /// The body is not well-formed XML (or is nested deeper than any AWS response).
        case malformedXML = "malformed_xml"
        /// The document is XML of another kind than the one expected (and not an AWS error document).
        case unexpectedDocument = "unexpected_document"
        /// An element the response must have is missing.
        case missingElement = "missing_element"
        /// An element holds text that is not the date, number or boolean it must be.
        case invalidValue = "invalid_value"
    }

    /// What went wrong.
    package let code: Code
    /// A sentence for a person.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    package var description: String { "ObjectStorageResponseError(\(self.code.rawValue)): \(self.message)" }
}
