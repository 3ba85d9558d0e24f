import Foundation

@available(LatchkeyServer 1.0, *)
extension SigV4Signer {
    /// The longest lifetime of a presigned URL AWS accepts: seven days.
    public static let maximumPresignedLifetime = 604_800

    /// A URL that carries its own signature in the query, for someone without credentials to use until it expires.
    ///
    /// - Parameters:
    ///   - method: The HTTP method the URL is for (`GET` to download, `PUT` to upload).
    ///   - url: The object's URL; its own query parameters are signed too.
    ///   - headers: Headers the user of the URL must send exactly, signed besides `host`: `Content-Type` for an upload
    ///     that must have that type.
    ///   - seconds: How long the URL works, 1…604800 (``maximumPresignedLifetime``).
    ///   - payload: What the signature says of the body; `nil` is botocore's choice: ``SigV4Payload/unsigned`` for S3,
    ///     an empty body for every other service.
    ///   - date: The time of signing, from which the lifetime counts.
    /// - Returns: The URL with `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
    ///   `X-Amz-SignedHeaders`, `X-Amz-Security-Token` (temporary credentials) and `X-Amz-Signature`.
    public func presign(
        method: String, url: URLComponents, headers: [String: String] = [:], expiresAfter seconds: Int, payload: SigV4Payload? = nil, date: Date
    ) throws -> URL {
        try self.presignedRequest(method: method, url: url, headers: headers, expiresAfter: seconds, payload: payload, date: date).url
    }

    /// ``presign(method:url:headers:expiresAfter:payload:date:)`` with what it signed, for tests and debugging.
    package func presignedRequest(
        method: String, url: URLComponents, headers: [String: String] = [:], expiresAfter seconds: Int, payload: SigV4Payload? = nil, date: Date
    ) throws -> SigV4SignedRequest {
        let (url, signature) = try self.presigned(
            method: method, target: try SigV4RequestTarget(url: url), headers: headers, expiresAfter: seconds, payload: payload, date: date)
        guard let url = URL(string: url) else { throw SigV4Error(code: .invalidURL, message: "the signed URL could not be formed") }
        return SigV4SignedRequest(url: url, headers: [:], body: nil, signature: signature)
    }

    /// A presigned URL, as text, for a target read once and reused (``SigV4RequestTarget/appendingPath(_:)`` for each
    /// object below a bucket): the server's fast path, no URL parsed or formed.
    package func presignedURL(
        method: String, target: SigV4RequestTarget, headers: [String: String] = [:], expiresAfter seconds: Int, payload: SigV4Payload? = nil,
        date: Date
    ) throws -> String {
        try self.presigned(method: method, target: target, headers: headers, expiresAfter: seconds, payload: payload, date: date).url
    }

    private func presigned(
        method: String, target: SigV4RequestTarget, headers: [String: String], expiresAfter seconds: Int, payload: SigV4Payload?, date: Date
    ) throws -> (url: String, signature: SigV4Signature) {
        guard (1...Self.maximumPresignedLifetime).contains(seconds) else {
            throw SigV4Error(code: .invalidExpiry, message: "a presigned URL lives 1 to \(Self.maximumPresignedLifetime) seconds, not \(seconds)")
        }
        var target = target
        let timestamp = SigV4Timestamp(date)
        let day = self.day(of: timestamp)
        let signed = self.canonicalHeaders(
            headers.isEmpty ? headers : headers.filter { !Self.signerHeaderNames.contains($0.key.lowercased()) }, host: target.host)
        // Names are unreserved characters: only the values need encoding (the credential's once a day).
        var authorization = [
            SigV4RequestTarget.Parameter(name: "X-Amz-Algorithm", value: "AWS4-HMAC-SHA256"),
            SigV4RequestTarget.Parameter(name: "X-Amz-Credential", value: day.encodedCredential),
            SigV4RequestTarget.Parameter(name: "X-Amz-Date", value: timestamp.dateTime),
            SigV4RequestTarget.Parameter(name: "X-Amz-Expires", value: String(seconds)),
            SigV4RequestTarget.Parameter(name: "X-Amz-SignedHeaders", value: AWSURIEncoding.encode(signed.names)),
        ]
        if let token = self.credentials.sessionToken {
            authorization.insert(SigV4RequestTarget.Parameter(name: "X-Amz-Security-Token", value: AWSURIEncoding.encode(token)), at: 4)
        }
        target.parameters += authorization
        let payload = payload ?? (self.service == "s3" ? .unsigned : .empty)
        let query = target.canonicalQuery
        let signature = self.signature(
            method: method, target: target, query: query, headers: signed, payloadHash: payload.canonicalValue, timestamp: timestamp)
        return (target.urlString(query: "\(query)&X-Amz-Signature=\(signature.signature)"), signature)
    }
}
