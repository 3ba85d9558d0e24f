import Foundation

/// Signs requests to AWS, and to S3-compatible servers (MinIO, SeaweedFS), with Signature Version 4.
///
/// Two ways: in the headers (``sign(method:url:headers:payload:date:)``, ``signFormPost(url:parameters:date:)``) or
/// in the query of a URL handed to someone else (``presign(method:url:headers:expiresAfter:payload:date:)``).
/// The canonicalisation is botocore's, and tests compare it with botocore request by request.
public struct SigV4Signer: Sendable {
    /// The region the requests go to (`us-east-1`); S3-compatible servers usually accept `us-east-1`.
    public let region: String
    /// The service's signing name: `s3`, `sts`, `iam`.
    public let service: String
    /// The key that signs.
    public let credentials: AWSCredentials
    /// Whether the canonical URI normalises the path and encodes it a second time: what every service but S3 expects
    /// (botocore's `SigV4Auth`). S3 signs the path as it is sent (`S3SigV4Auth`).
    public let doubleEncodesPath: Bool
    /// Whether header signing always adds `X-Amz-Content-Sha256`, as S3 requires. Other services get it only for an
    /// unsigned payload, as botocore does.
    public let sendsContentHash: Bool
    let keyCache = SigningKeyCache()

    /// A signer for one region and service.
    ///
    /// - Parameters:
    ///   - region: The region, as in the credential scope.
    ///   - service: The signing name of the service.
    ///   - credentials: The key that signs.
    ///   - doubleEncodesPath: Defaults to `true` for every service but `s3`.
    ///   - sendsContentHash: Defaults to `true` for `s3` only.
    public init(region: String, service: String, credentials: AWSCredentials, doubleEncodesPath: Bool? = nil, sendsContentHash: Bool? = nil) {
        self.region = region
        self.service = service
        self.credentials = credentials
        self.doubleEncodesPath = doubleEncodesPath ?? (service != "s3")
        self.sendsContentHash = sendsContentHash ?? (service == "s3")
    }

    /// Signs a request in its headers.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - url: Where the request goes. Its path and query are read as written (escapes decoded, `+` a plus sign) and
    ///     sent re-encoded: send it to the returned ``SigV4SignedRequest/url``.
    ///   - headers: The headers to sign besides `host` (derived from the URL unless given): `Range`, `Content-Type`,
    ///     `x-amz-meta-*`…; hop-by-hop ones and `User-Agent` are left unsigned, as botocore does, and the signer's own
    ///     (`Authorization`, `X-Amz-Date`, `X-Amz-Security-Token`, `X-Amz-Content-Sha256`) are replaced.
    ///   - payload: The body, its hash, or ``SigV4Payload/unsigned``.
    ///   - date: The time of signing (the server allows about 15 minutes of skew).
    /// - Returns: The URL to send and the headers to add.
    public func sign(
        method: String, url: URLComponents, headers: [String: String] = [:], payload: SigV4Payload, date: Date
    ) throws
        -> SigV4SignedRequest
    {
        try self.sign(method: method, url: url, headers: headers, adding: [:], payload: payload, date: date)
    }

    /// Signs a `POST` whose body is a form (`application/x-www-form-urlencoded; charset=utf-8`), as the STS and IAM
    /// Query API expects: `Action=AssumeRole&Version=2011-06-15&RoleArn=…`.
    ///
    /// - Parameters:
    ///   - url: The endpoint, such as `https://sts.amazonaws.com/`.
    ///   - parameters: The form's fields, in order; a `nil` value is sent as `name=`.
    ///   - date: The time of signing.
    /// - Returns: The URL, the headers to add (`Content-Type` among them) and the ``SigV4SignedRequest/body`` to send.
    public func signFormPost(url: URLComponents, parameters: [URLQueryItem], date: Date) throws -> SigV4SignedRequest {
        let form = parameters.map { "\(AWSURIEncoding.encode($0.name))=\(AWSURIEncoding.encode($0.value ?? ""))" }.joined(separator: "&")
        return try self.sign(
            method: "POST", url: url, headers: [:], adding: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
            payload: .data(Data(form.utf8)), date: date)
    }

    /// Signs `headers` and `extra`; returns `extra` with the signer's own headers.
    private func sign(
        method: String, url: URLComponents, headers: [String: String], adding extra: [String: String], payload: SigV4Payload, date: Date
    ) throws -> SigV4SignedRequest {
        let target = try SigV4RequestTarget(url: url)
        let timestamp = SigV4Timestamp(date)
        var added = extra
        added["X-Amz-Date"] = timestamp.dateTime
        if self.sendsContentHash || payload == .unsigned { added["X-Amz-Content-Sha256"] = payload.canonicalValue }
        if let token = self.credentials.sessionToken { added["X-Amz-Security-Token"] = token }
        let signed = headers.filter { !Self.signerHeaderNames.contains($0.key.lowercased()) }.merging(added) { _, new in new }
        let query = target.canonicalQuery
        let signature = self.signature(
            method: method, target: target, query: query, headers: self.canonicalHeaders(signed, host: target.host),
            payloadHash: payload.canonicalValue, timestamp: timestamp)
        added["Authorization"] = signature.authorization
        let body: Data? = if case .data(let data) = payload { data } else { nil }
        return SigV4SignedRequest(url: try target.url(query: query), headers: added, body: body, signature: signature)
    }
}
