import Foundation
import LatchkeyClient

/// A transport that records every request and answers through a script; no network. (The minimum of
/// Tests/LatchkeyClientTests/Support/StubTransport.swift: test targets cannot share sources.)
final class StubTransport: HTTPTransport, @unchecked Sendable {
    typealias Handler = @Sendable (TransportRequest) async throws -> TransportResponse
    private let lock = NSLock()
    private var recorded: [TransportRequest] = []
    private let handler: Handler

    init(_ handler: @escaping Handler) { self.handler = handler }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        self.lock.withLock { self.recorded.append(request) }
        return try await self.handler(request)
    }

    var requests: [TransportRequest] { self.lock.withLock { self.recorded } }

    /// The requests whose URL is on `host` with path `path`.
    func requests(to host: String, _ path: String) -> [TransportRequest] {
        self.requests.filter { $0.url.host == host && $0.url.path == path }
    }
}

/// One app install for a seed test: in-memory Keychain and UserDefaults, the stub transport and a clock that moves only
/// when told to.
struct StubbedInstall {
    let transport: StubTransport
    let store = InMemorySecureStore()
    let defaults = InMemoryKeyValueStore()
    let clock = ManualLatchkeyClock()

    init(_ handler: @escaping StubTransport.Handler) { self.transport = StubTransport(handler) }

    /// A launch of the app: a new session over this install's stores.
    func session(_ configuration: LatchkeySession.Configuration) -> LatchkeySession {
        LatchkeySession(configuration: configuration, secureStore: self.store, defaults: self.defaults, transport: self.transport, clock: self.clock)
    }
}

extension TransportRequest {
    /// The bearer the request carries, if any.
    var bearer: String? {
        guard let value = self.header("Authorization"), value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }
}

extension TransportResponse {
    static func json(_ status: Int, _ value: some Encodable, headers: [String: String] = [:]) -> TransportResponse {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return TransportResponse(
            status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: try! encoder.encode(value))
    }

    static func error(_ status: Int, _ code: ErrorCode, headers: [String: String] = [:]) -> TransportResponse {
        .json(status, ErrorEnvelope(code: code, message: "refused"), headers: headers)
    }

    /// A session the server issued to `userID`.
    static func tokenPair(_ n: Int, userID: String) -> TransportResponse {
        .json(
            200,
            TokenPairResponse(
                accessToken: "access-\(n)", expiresIn: 900, refreshToken: "refresh-\(n)", refreshTokenExpiresIn: 2_592_000, userID: userID,
                sessionID: "session-\(n)"))
    }

    /// `GET /auth/me` for `userID`.
    static func profile(_ userID: String, kind: UserKind = .device, tokenKind: TokenKind = .session) -> TransportResponse {
        .json(
            200,
            UserProfile(
                userID: userID, kind: kind, createdAt: Date(timeIntervalSince1970: 1_800_000_000), tokenKind: tokenKind, sessionID: nil,
                identities: [], devices: []))
    }
}
