import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import Logging

/// The storage side of a Latchkey server as the wire contract describes it, plus the object store its presigned URLs
/// point at, on an ephemeral 127.0.0.1 port: what `latchkey-device storage …` and `assets …` talk to in their tests.
/// Register-device hands out `access-<n>` tokens without checking proofs; "signatures" are `sig-<METHOD>`.
final class FakeStorageServer: @unchecked Sendable {
    static let secretAccessKey = "FAKE-SECRET-ACCESS-KEY-0123456789"
    static let sessionToken = "FAKE-SESSION-TOKEN-0123456789"
    static let accessKeyID = "ASIAFAKEACCESSKEYID"

    private let lock = NSLock()
    private var objects: [String: (body: [UInt8], contentType: String?)] = [:]
    private var devices: Set<String> = []
    private var assetRequests: [(authorization: String?, deviceID: String?)] = []
    private(set) var url = URL(string: "http://127.0.0.1")!

    /// Runs `body` against a fresh server; `storage: false` answers every storage route 404 `not_found`.
    static func run(storage: Bool = true, _ body: @Sendable (FakeStorageServer) async throws -> Void) async throws {
        let server = FakeStorageServer()
        let router = Router()
        server.addRoutes(to: router, storage: storage)
        var logger = Logger(label: "fake-storage")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await app.test(.live) { client in
            server.url = URL(string: "http://127.0.0.1:\(client.port!)")!
            try await body(server)
        }
    }

    func object(_ key: String) -> (body: [UInt8], contentType: String?)? { self.lock.withLock { self.objects[key] } }
    func putObject(_ key: String, _ body: [UInt8]) { self.lock.withLock { self.objects[key] = (body, nil) } }
    /// The `Authorization` and `X-Device-ID` each asset request carried.
    var assetHeaders: [(authorization: String?, deviceID: String?)] { self.lock.withLock { self.assetRequests } }
    var knownDevices: Set<String> { self.lock.withLock { self.devices } }

    private func addRoutes(to router: Router<BasicRequestContext>, storage: Bool) {
        router.post("api/v1/auth/register-device") { request, context in
            let registration = try await request.decode(as: RegisterDeviceRequest.self, context: context)
            let n = self.lock.withLock {
                self.devices.insert(registration.deviceID)
                return self.devices.count
            }
            let pair = TokenPairResponse(
                accessToken: "access-\(n)", expiresIn: 900, refreshToken: "refresh-\(n)", refreshTokenExpiresIn: 86_400,
                userID: registration.deviceID,
                sessionID: "session-\(n)", deviceSecret: nil)
            return try Self.json(pair, status: .created)
        }
        router.post("api/v1/storage/credentials") { request, _ in
            guard storage else { return try Self.error(.notFound, .notFound) }
            guard request.headers[.authorization]?.hasPrefix("Bearer access-") == true else { return try Self.error(.unauthorized, .invalidToken) }
            return try Self.json(
                StorageCredentials(
                    accessKeyID: Self.accessKeyID, secretAccessKey: Self.secretAccessKey, sessionToken: Self.sessionToken,
                    expiration: Self.inWholeSeconds(3600), expiresIn: 3600, bucket: "photos", region: "us-east-1",
                    endpoint: self.url.absoluteString + "/store", prefix: "users/u/"))
        }
        router.post("api/v1/storage/presign") { request, context in
            guard storage else { return try Self.error(.notFound, .notFound) }
            let body = try await request.decode(as: PresignRequest.self, context: context)
            guard !body.key.split(separator: "/").contains("..") else {
                return try Self.error(.badRequest, .invalidKey, "key contains a .. segment.")
            }
            return try Self.json(self.presigned(body.method, key: "users/u/" + body.key, contentType: body.contentType))
        }
        router.get("api/v1/assets") { request, _ in
            guard self.recordAssetRequest(request) != nil else { return try Self.error(.unauthorized, .unknownDevice) }
            let prefix = "assets/" + (request.uri.queryParameters["prefix"].map(String.init) ?? "")
            let assets = self.lock.withLock { self.objects.filter { $0.key.hasPrefix(prefix) } }.sorted { $0.key < $1.key }.map {
                Asset(key: String($0.key.dropFirst("assets/".count)), size: $0.value.body.count, lastModified: nil, etag: nil)
            }
            return try Self.json(AssetList(assets: assets, nextCursor: nil))
        }
        router.get("api/v1/assets/url") { request, _ in
            guard self.recordAssetRequest(request) != nil else { return try Self.error(.unauthorized, .unknownDevice) }
            return try Self.json(self.presigned(.get, key: "assets/" + (request.uri.queryParameters["key"].map(String.init) ?? ""), contentType: nil))
        }
        router.put("store/**") { request, _ in
            let key = String(request.uri.path.dropFirst("/store/".count))
            guard request.uri.queryParameters["X-Amz-Signature"] == "sig-PUT" else { return Self.storeError(.forbidden, "SignatureDoesNotMatch") }
            let body = try await request.body.collect(upTo: 1 << 24)
            self.lock.withLock { self.objects[key] = (Array(body.readableBytesView), request.headers[.contentType]) }
            return Response(status: .ok, headers: [.eTag: "\"etag-\(body.readableBytes)\""])
        }
        router.get("store/**") { request, _ in
            let key = String(request.uri.path.dropFirst("/store/".count))
            guard request.uri.queryParameters["X-Amz-Signature"] == "sig-GET" else { return Self.storeError(.forbidden, "SignatureDoesNotMatch") }
            guard let object = self.object(key) else { return Self.storeError(.notFound, "NoSuchKey") }
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: object.body)))
        }
    }

    /// Records the request's credentials; the device ID when it names a registered device.
    private func recordAssetRequest(_ request: Request) -> String? {
        let deviceID = request.headers[HTTPField.Name(LatchkeyHeader.deviceID)!]
        return self.lock.withLock {
            self.assetRequests.append((request.headers[.authorization], deviceID))
            return deviceID.flatMap { self.devices.contains($0) ? $0 : nil }
        }
    }

    private func presigned(_ method: PresignMethod, key: String, contentType: String?) -> PresignedURL {
        PresignedURL(
            url: "\(self.url.absoluteString)/store/\(key)?X-Amz-Signature=sig-\(method.rawValue)", method: method,
            headers: contentType.map { ["Content-Type": $0] } ?? [:], expiresAt: Self.inWholeSeconds(300))
    }

    /// `seconds` from now, in whole seconds as ISO 8601 on the wire keeps them.
    private static func inWholeSeconds(_ seconds: TimeInterval) -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + seconds).rounded(.down))
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return Response(
            status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    private static func error(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String = "refused") throws -> Response {
        try Self.json(ErrorEnvelope(code: code, message: message), status: status)
    }

    private static func storeError(_ status: HTTPResponse.Status, _ code: String) -> Response {
        let xml = "<?xml version=\"1.0\"?><Error><Code>\(code)</Code><Message>no</Message></Error>"
        return Response(status: status, headers: [.contentType: "application/xml"], body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }
}
