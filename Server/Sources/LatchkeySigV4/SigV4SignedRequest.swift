import Foundation

/// A request signed in its headers: the URL to send it to and the headers to add.
public struct SigV4SignedRequest: Sendable {
    /// The URL to send the request to: the one given, with its path and query encoded exactly as they were signed
    /// (the query sorted). Send this one: a server recomputes the signature from the path and query it receives.
    public let url: URL
    /// The headers to add to the ones given: `Authorization`, `X-Amz-Date`, `X-Amz-Content-Sha256` (S3, or an unsigned
    /// payload), `X-Amz-Security-Token` (temporary credentials) and, for a form post, `Content-Type`.
    public let headers: [String: String]
    /// The body to send when the signer knows it: the form of a form post, or the payload given as data.
    public let body: Data?
    /// The signature (lowercase hex), also inside `Authorization`.
    public let signature: String
    /// The canonical request that was signed, for debugging.
    package let canonicalRequest: String
    /// The string to sign, for debugging.
    package let stringToSign: String

    package init(url: URL, headers: [String: String], body: Data?, signature: SigV4Signature) {
        self.url = url
        self.headers = headers
        self.body = body
        self.signature = signature.signature
        self.canonicalRequest = signature.canonicalRequest
        self.stringToSign = signature.stringToSign
    }
}

/// One signature and what it was computed from.
package struct SigV4Signature: Sendable, Hashable {
    /// The canonical request (method, URI, query, headers, signed header names, payload hash); empty from
    /// `presignedURL(method:target:…)`, which keeps only the URL.
    package let canonicalRequest: String
    /// `AWS4-HMAC-SHA256`, the timestamp, the scope and the canonical request's hash; empty where
    /// ``canonicalRequest`` is.
    package let stringToSign: String
    /// `access-key-id/yyyyMMdd/region/service/aws4_request`.
    package let credential: String
    /// The signed header names, lowercase, sorted, `;`-separated.
    package let signedHeaders: String
    /// The HMAC-SHA256 of the string to sign (lowercase hex).
    package let signature: String

    /// The `Authorization` header that carries this signature.
    package var authorization: String {
        "AWS4-HMAC-SHA256 Credential=\(self.credential), SignedHeaders=\(self.signedHeaders), Signature=\(self.signature)"
    }
}

extension SigV4SignedRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL without its query, the names of the headers and the signature: never the session token that
    /// `X-Amz-Security-Token` (or a presigned URL's query) carries.
    public var description: String {
        var components = URLComponents(url: self.url, resolvingAgainstBaseURL: false)
        components?.query = nil
        let location = components?.string ?? "<url>"
        return "SigV4SignedRequest(url: \(location), headers: \(self.headers.keys.sorted()), signature: \(self.signature))"
    }

    /// The same as ``description``.
    public var debugDescription: String { self.description }

    /// Only the harmless fields, so `dump` shows no token either.
    public var customMirror: Mirror {
        Mirror(self, children: [(label: "description", value: self.description as Any)], displayStyle: .struct)
    }
}
