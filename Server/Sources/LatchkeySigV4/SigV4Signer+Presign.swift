import Crypto
import Foundation

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
            method: method, target: try SigV4RequestTarget(url: url), headers: headers, expiresAfter: seconds, payload: payload, date: date,
            keepingCanonicalForms: true)
        guard let url = URL(string: url) else { throw SigV4Error(code: .invalidURL, message: "the signed URL could not be formed") }
        return SigV4SignedRequest(url: url, headers: [:], body: nil, signature: signature)
    }

    /// A presigned URL, as text, for a target read once and reused (``SigV4RequestTarget/appendingPath(_:)`` for each
    /// object below a bucket): the server's fast path, no URL parsed or formed.
    package func presignedURL(
        method: String, target: SigV4RequestTarget, headers: [String: String] = [:], expiresAfter seconds: Int, payload: SigV4Payload? = nil,
        date: Date
    ) throws -> String {
        try self.presigned(
            method: method, target: target, headers: headers, expiresAfter: seconds, payload: payload, date: date, keepingCanonicalForms: false
        ).url
    }

    /// Signs in the query. The URL and the canonical request are assembled as bytes (one buffer each): this runs on
    /// every `storage/presign`, where joining strings cost more than the hashing.
    private func presigned(
        method: String, target: SigV4RequestTarget, headers: [String: String], expiresAfter seconds: Int, payload: SigV4Payload?, date: Date,
        keepingCanonicalForms: Bool
    ) throws -> (url: String, signature: SigV4Signature) {
        guard (1...Self.maximumPresignedLifetime).contains(seconds) else {
            throw SigV4Error(code: .invalidExpiry, message: "a presigned URL lives 1 to \(Self.maximumPresignedLifetime) seconds, not \(seconds)")
        }
        var target = target
        let timestamp = SigV4Timestamp(date)
        let day = self.day(of: timestamp)
        let signed = self.canonicalHeaders(
            headers.isEmpty ? headers : headers.filter { !Self.signerHeaderNames.contains($0.key.lowercased()) }, host: target.host)
        // Names are unreserved characters: only the values need encoding (the credential and token once a day).
        target.parameters += [
            SigV4RequestTarget.Parameter(name: "X-Amz-Algorithm", value: "AWS4-HMAC-SHA256"),
            SigV4RequestTarget.Parameter(name: "X-Amz-Credential", value: day.encodedCredential),
            SigV4RequestTarget.Parameter(name: "X-Amz-Date", value: timestamp.dateTime),
            SigV4RequestTarget.Parameter(name: "X-Amz-Expires", value: String(seconds)),
        ]
        if let token = day.encodedSessionToken {
            target.parameters.append(SigV4RequestTarget.Parameter(name: "X-Amz-Security-Token", value: token))
        }
        target.parameters.append(SigV4RequestTarget.Parameter(name: "X-Amz-SignedHeaders", value: AWSURIEncoding.encode(signed.names)))
        let payload = payload ?? (self.service == "s3" ? .unsigned : .empty)

        var url = UTF8Text(capacity: 1024)
        url.append(target.origin)
        url.append(target.encodedPath)
        url.append(byte: UInt8(ascii: "?"))
        let queryStart = url.count
        target.writeCanonicalQuery(to: &url)
        let query = url.bytes[queryStart...]

        var canonicalRequest = UTF8Text(capacity: 512 + query.count)
        canonicalRequest.append(method.uppercased())
        canonicalRequest.append(byte: 0x0a)
        canonicalRequest.append(target.canonicalURI(doubleEncodingPath: self.doubleEncodesPath))
        canonicalRequest.append(byte: 0x0a)
        canonicalRequest.append(query)
        canonicalRequest.append(byte: 0x0a)
        canonicalRequest.append(signed.lines)
        canonicalRequest.append("\n\n")
        canonicalRequest.append(signed.names)
        canonicalRequest.append(byte: 0x0a)
        canonicalRequest.append(payload.canonicalValue)

        var stringToSign = UTF8Text(capacity: 160)
        stringToSign.append("AWS4-HMAC-SHA256\n")
        stringToSign.append(timestamp.dateTime)
        stringToSign.append(byte: 0x0a)
        stringToSign.append(day.scope)
        stringToSign.append(byte: 0x0a)
        var hash = SHA256()
        canonicalRequest.bytes.withUnsafeBytes { hash.update(bufferPointer: $0) }
        stringToSign.appendHex(of: hash.finalize())
        var authenticator = day.authenticator
        stringToSign.bytes.withUnsafeBytes { authenticator.update(data: $0) }

        url.append("&X-Amz-Signature=")
        let signatureStart = url.count
        url.appendHex(of: authenticator.finalize())
        let signature = SigV4Signature(
            canonicalRequest: keepingCanonicalForms ? canonicalRequest.string : "", stringToSign: keepingCanonicalForms ? stringToSign.string : "",
            credential: day.credential, signedHeaders: signed.names,
            signature: String(decoding: url.bytes[signatureStart...], as: UTF8.self))
        return (url.string, signature)
    }
}
