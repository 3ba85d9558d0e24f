import AsyncHTTPClient
import Foundation
import LatchkeySigV4
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The STS and S3 calls Latchkey makes with its own key: `AssumeRole` (vended credentials) and `ListObjectsV2`
/// (assets); and the presigned URLs it hands out. Requests are SigV4-signed; errors name STS's or S3's error code and
/// never carry a key, a token or a signature.
package struct ObjectStorageClient: Sendable {
    let configuration: StorageConfiguration
    let http: HTTPClient
    private let sts: SigV4Signer
    private let s3: SigV4Signer
    /// `<endpoint>/<bucket>`, read once: path-style addressing, which every S3-compatible store understands, and AWS too.
    private let bucketURL: URLComponents?
    /// The bucket's URL as a signature sees it, read once: presigning an object appends its key and parses nothing.
    private let bucketTarget: SigV4RequestTarget?

    package init(configuration: StorageConfiguration, http: HTTPClient) {
        self.configuration = configuration
        self.http = http
        let key = AWSCredentials(accessKeyID: configuration.accessKeyID ?? "", secretAccessKey: configuration.secretAccessKey ?? "")
        self.sts = SigV4Signer(region: configuration.region, service: "sts", credentials: key)
        self.s3 = SigV4Signer(region: configuration.region, service: "s3", credentials: key)
        var bucketURL = URLComponents(string: configuration.resolvedEndpoint)
        bucketURL?.path += "/" + (configuration.bucket ?? "")
        self.bucketURL = bucketURL
        self.bucketTarget = bucketURL.flatMap { try? SigV4RequestTarget(url: $0) }
    }

    /// Calls STS `AssumeRole` for `userID`: the configured role, a session name derived from the user ID, the configured
    /// duration and a session policy that allows only the user's folder.
    func assumeRole(forUser userID: String, prefix: String, at date: Date) async throws -> AssumeRoleResponse {
        guard let url = URL(string: self.configuration.resolvedSTSEndpoint + "/") else { throw Self.misconfigured }
        let parameters = [
            URLQueryItem(name: "Action", value: "AssumeRole"), URLQueryItem(name: "Version", value: "2011-06-15"),
            URLQueryItem(name: "RoleArn", value: self.configuration.roleARN ?? ""),
            URLQueryItem(name: "RoleSessionName", value: SessionPolicy.roleSessionName(forUser: userID)),
            URLQueryItem(name: "DurationSeconds", value: String(Int(self.configuration.duration))),
            URLQueryItem(
                name: "Policy",
                value: SessionPolicy(bucket: self.configuration.bucket ?? "", prefix: prefix, actions: self.configuration.actions).json),
        ]
        let signed = try self.sts.signFormPost(url: url, parameters: parameters, date: date)
        let body = try await self.send("POST", signed, service: "STS")
        do {
            return try AssumeRoleResponse.parse(body)
        } catch {
            throw ServiceError.upstream("STS answered AssumeRole with a body that is not an AssumeRoleResponse.")
        }
    }

    /// One page of `ListObjectsV2` under `prefix`.
    func list(prefix: String, continuationToken: String?, maxKeys: Int, at date: Date) async throws -> ListObjectsResult {
        guard var components = self.bucketURL else { throw Self.misconfigured }
        components.path += "/"
        var query = [
            URLQueryItem(name: "list-type", value: "2"), URLQueryItem(name: "prefix", value: prefix),
            URLQueryItem(name: "max-keys", value: String(maxKeys)),
        ]
        if let continuationToken { query.append(URLQueryItem(name: "continuation-token", value: continuationToken)) }
        components.queryItems = query
        let signed = try self.s3.sign(method: "GET", url: components, payload: .empty, date: date)
        let body = try await self.send("GET", signed, service: "S3")
        do {
            return try ListObjectsResult.parse(body)
        } catch {
            throw ServiceError.upstream("S3 answered ListObjectsV2 with a body that is not a ListBucketResult.")
        }
    }

    /// A presigned URL for `method` on `key` (the whole key, folder included), valid `lifetime` seconds from `date`;
    /// `headers` are signed, so the request must send them as they are.
    func presign(method: String, key: String, headers: [String: String], lifetime: Int, at date: Date) throws -> String {
        guard let bucket = self.bucketTarget else { throw Self.misconfigured }
        return try self.s3.presignedURL(method: method, target: bucket.appendingPath(key), headers: headers, expiresAfter: lifetime, date: date)
    }

    /// Sends a signed request; the body of a 2xx answer, else 502 naming the service's error code.
    private func send(_ method: String, _ signed: SigV4SignedRequest, service: String) async throws -> Data {
        var request = HTTPClientRequest(url: signed.url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in signed.headers { request.headers.add(name: name, value: value) }
        if let body = signed.body { request.body = .bytes(ByteBuffer(data: body)) }
        let response: HTTPClientResponse
        let body: Data
        do {
            response = try await self.http.execute(request, timeout: .milliseconds(Int64(self.configuration.timeout * 1000)))
            body = Data(try await response.body.collect(upTo: 4 << 20).readableBytesView)
        } catch {
            throw ServiceError.upstream("\(service) did not answer within storage.timeout (\(self.configuration.timeout) s) or could not be reached.")
        }
        guard (200..<300).contains(response.status.code) else {
            let code = (try? AWSErrorResponse.parse(body))?.code ?? "HTTP \(response.status.code)"
            throw ServiceError.upstream("\(service) refused the request: \(code).")
        }
        return body
    }

    private static let misconfigured = ServiceError.upstream("The storage endpoint is not a URL.")
}
