import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyServer
import NIOCore
import Synchronization

/// A stand-in for STS on a real socket: answers `AssumeRole` with fresh credentials (a new key per call, expiring
/// `lifetime` after the test clock's now) or with an STS error, and records every call's form fields.
final class FakeSTS: Sendable {
    enum Mode: Sendable {
        case succeed
        case refuse(status: Int, code: String)
        case notXML
    }

    let clock: ManualClock
    let lifetime: TimeInterval
    private let state = Mutex<(calls: [[String: String]], mode: Mode)>(([], .succeed))

    init(clock: ManualClock, lifetime: TimeInterval = 3600) {
        self.clock = clock
        self.lifetime = lifetime
    }

    var calls: [[String: String]] { self.state.withLock { $0.calls } }
    func answer(_ mode: Mode) { self.state.withLock { $0.mode = mode } }

    /// Runs `body` with the fake's base URL (`http://127.0.0.1:<port>`) while it listens.
    func run<T: Sendable>(_ body: @escaping @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            var components = URLComponents()
            components.percentEncodedQuery = String(buffer: bytes)
            var fields: [String: String] = [:]
            for item in components.queryItems ?? [] { fields[item.name] = item.value ?? "" }
            fields["authorization"] = request.headers[.authorization] ?? ""
            let (count, mode) = self.state.withLock { state in
                state.calls.append(fields)
                return (state.calls.count, state.mode)
            }
            switch mode {
            case .succeed:
                let expiration = ISO8601DateFormatter().string(from: self.clock.now().addingTimeInterval(self.lifetime))
                return Self.xml(
                    200,
                    """
                    <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>\
                    <AccessKeyId>ASIAFAKE\(count)</AccessKeyId><SecretAccessKey>fake-secret-\(count)-\(Self.marker)</SecretAccessKey>\
                    <SessionToken>fake-token-\(count)-\(Self.marker)</SessionToken><Expiration>\(expiration)</Expiration></Credentials>\
                    </AssumeRoleResult></AssumeRoleResponse>
                    """)
            case .refuse(let status, let code):
                return Self.xml(
                    status,
                    """
                    <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>\(code)</Code>\
                    <Message>refused by the fake</Message></Error><RequestId>1</RequestId></ErrorResponse>
                    """)
            case .notXML:
                return Self.xml(200, "this is not XML")
            }
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("the fake STS has no port") }
            return try await body("http://127.0.0.1:\(port)")
        }
    }

    /// A marker inside every secret the fake hands out, for the log checks.
    static let marker = "zq-vended-7731"

    private static func xml(_ status: Int, _ text: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/xml"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

extension LatchkeyConfiguration {
    /// Storage on, against STS at `sts` and S3 at `s3` (a fake or SeaweedFS).
    mutating func useStorage(sts: String, s3: String = "http://127.0.0.1:9", bucket: String = "photos", assets: String? = "assets/") {
        self.storage.bucket = bucket
        self.storage.endpoint = s3
        self.storage.stsEndpoint = sts
        self.storage.accessKeyID = "AKIALATCHKEYTEST"
        self.storage.secretAccessKey = "latchkey-admin-secret-\(FakeSTS.marker)"
        self.storage.roleARN = "arn:aws:iam::000000000000:role/LatchkeyUserRole"
        self.storage.assetsPrefix = assets
        self.storage.timeout = 5
    }
}
