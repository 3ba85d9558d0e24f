import Foundation
import LatchkeyServer
import LatchkeySigV4
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real S3 + STS server (SeaweedFS, which `scripts/test` starts and names in `LATCHKEY_TEST_S3_*`), and plain
/// SigV4-signed requests to it, as any S3 SDK would send them.
@available(LatchkeyServer 1.0, *)
enum S3Peer {
    static let environment = ProcessInfo.processInfo.environment
    static var endpoint: String? { Self.environment["LATCHKEY_TEST_S3_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 } }
    static var isAvailable: Bool { Self.endpoint != nil }
    static let skipReason: Comment =
        "LATCHKEY_TEST_S3_ENDPOINT is not set, so there is no S3/STS server to test against (scripts/test starts SeaweedFS)"

    static var region: String { Self.environment["LATCHKEY_TEST_S3_REGION"] ?? "us-east-1" }
    static var bucket: String { Self.environment["LATCHKEY_TEST_S3_BUCKET"] ?? "latchkey-test" }
    static var admin: AWSCredentials {
        AWSCredentials(
            accessKeyID: Self.environment["LATCHKEY_TEST_S3_ACCESS_KEY_ID"] ?? "",
            secretAccessKey: Self.environment["LATCHKEY_TEST_S3_SECRET_ACCESS_KEY"] ?? "")
    }

    /// Storage on, against the peer, with the peer's admin key and role.
    static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.storage.bucket = Self.bucket
        configuration.storage.region = Self.region
        configuration.storage.endpoint = Self.endpoint
        configuration.storage.stsEndpoint = Self.environment["LATCHKEY_TEST_S3_STS_ENDPOINT"] ?? Self.endpoint
        configuration.storage.accessKeyID = Self.admin.accessKeyID
        configuration.storage.secretAccessKey = Self.admin.secretAccessKey
        configuration.storage.roleARN = Self.environment["LATCHKEY_TEST_S3_ROLE_ARN"] ?? "arn:aws:iam::000000000000:role/LatchkeyUserRole"
        configuration.storage.assetsPrefix = "assets/"
    }

    /// Sends a SigV4-signed S3 request for `key` (`nil`: the bucket, with `query`) and returns the status and body.
    static func send(
        _ method: String, key: String?, query: [URLQueryItem] = [], body: Data = Data(), credentials: AWSCredentials
    ) async throws -> (status: Int, body: Data) {
        var components = URLComponents(string: try #require(Self.endpoint))!
        components.path = "/\(Self.bucket)" + (key.map { "/" + $0 } ?? "/")
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
    static func plain(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}
