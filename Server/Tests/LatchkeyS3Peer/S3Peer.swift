import Foundation
import LatchkeyServer
import LatchkeySigV4
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real S3 + STS server (SeaweedFS, which `scripts/test` starts and names in `LATCHKEY_TEST_S3_*`), and plain
/// SigV4-signed requests to it, as any S3 SDK would send them. Shared by the server tests and the SDK's end-to-end
/// tests.
public enum S3Peer {
    public static let environment = ProcessInfo.processInfo.environment
    public static var endpoint: String? { Self.environment["LATCHKEY_TEST_S3_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } }
    public static var isAvailable: Bool { Self.endpoint != nil }
    public static let skipReason: Comment =
        "LATCHKEY_TEST_S3_ENDPOINT is not set, so there is no S3/STS server to test against (scripts/test starts SeaweedFS)"

    public static var region: String { Self.environment["LATCHKEY_TEST_S3_REGION"] ?? "us-east-1" }
    public static var bucket: String { Self.environment["LATCHKEY_TEST_S3_BUCKET"] ?? "latchkey-test" }
    public static var admin: AWSCredentials {
        AWSCredentials(
            accessKeyID: Self.environment["LATCHKEY_TEST_S3_ACCESS_KEY_ID"] ?? "",
            secretAccessKey: Self.environment["LATCHKEY_TEST_S3_SECRET_ACCESS_KEY"] ?? "")
    }

    /// Storage on, against the peer, with the peer's admin key and role.
    public static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.storage.bucket = Self.bucket
        configuration.storage.region = Self.region
        configuration.storage.endpoint = Self.endpoint
        configuration.storage.stsEndpoint = Self.environment["LATCHKEY_TEST_S3_STS_ENDPOINT"] ?? Self.endpoint
        configuration.storage.accessKeyID = Self.admin.accessKeyID
        configuration.storage.secretAccessKey = Self.admin.secretAccessKey
        configuration.storage.roleARN = Self.environment["LATCHKEY_TEST_S3_ROLE_ARN"] ?? "arn:aws:iam::000000000000:role/LatchkeyUserRole"
        configuration.storage.assetsPrefix = "assets/"
    }

    /// Sends a SigV4-signed S3 request for `key` (`nil`: the bucket, with `query`) and returns the status and body;
    /// to the peer's endpoint and bucket unless others are given (those a server vended, say).
    public static func send(
        _ method: String, key: String?, query: [URLQueryItem] = [], body: Data = Data(), credentials: AWSCredentials,
        endpoint: String? = nil, bucket: String? = nil
    ) async throws -> (status: Int, body: Data) {
        let base = try #require(endpoint ?? Self.endpoint)
        var components = try #require(URLComponents(string: base))
        components.path = "/\(bucket ?? Self.bucket)" + (key.map { "/" + $0 } ?? "/")
        if !query.isEmpty { components.queryItems = query }
        let signer = SigV4Signer(region: Self.region, service: "s3", credentials: credentials)
        let signed = try signer.sign(method: method, url: components, payload: .data(body), date: Date())
        var request = URLRequest(url: signed.url)
        request.httpMethod = method
        for (name, value) in signed.headers { request.setValue(value, forHTTPHeaderField: name) }
        if !body.isEmpty { request.httpBody = body }
        return try await Self.plain(request)
    }

    /// Sends `request` as it is (a presigned URL needs nothing else).
    public static func plain(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}
