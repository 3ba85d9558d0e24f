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
        guard (1...Self.maximumPresignedLifetime).contains(seconds) else {
            throw SigV4Error(code: .invalidExpiry, message: "a presigned URL lives 1 to \(Self.maximumPresignedLifetime) seconds, not \(seconds)")
        }
        var target = try SigV4RequestTarget(url: url)
        let timestamp = SigV4Timestamp(date)
        let signed = self.canonicalHeaders(headers.filter { !Self.signerHeaderNames.contains($0.key.lowercased()) }, host: target.host)
        var authorization = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(self.credentials.accessKeyID)/\(timestamp.date)/\(self.region)/\(self.service)/aws4_request"),
            ("X-Amz-Date", timestamp.dateTime),
            ("X-Amz-Expires", String(seconds)),
            ("X-Amz-SignedHeaders", signed.names),
        ]
        if let token = self.credentials.sessionToken { authorization.append(("X-Amz-Security-Token", token)) }
        target.parameters += authorization.map { SigV4RequestTarget.Parameter.encoding(name: $0.0, value: $0.1) }
        let payload = payload ?? (self.service == "s3" ? .unsigned : .empty)
        let query = target.canonicalQuery
        let signature = self.signature(
            method: method, target: target, query: query, headers: signed, payloadHash: payload.canonicalValue, timestamp: timestamp)
        return SigV4SignedRequest(
            url: try target.url(query: "\(query)&X-Amz-Signature=\(signature.signature)"), headers: [:], body: nil, signature: signature)
    }
}
