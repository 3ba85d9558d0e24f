import Foundation
import LatchkeyAPI
import LatchkeyClient

/// A transport that records every request and answers through a script; no network.
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

    /// Requests whose URL path is `path`.
    func requests(to path: String) -> [TransportRequest] { self.requests.filter { $0.url.path == path } }
}

/// A one-shot gate a stub handler waits on until the test opens it.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { continuation in
            let resume = self.lock.withLock { () -> Bool in
                if self.isOpen { return true }
                self.waiters.append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
    }

    func open() {
        let waiters = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            self.isOpen = true
            defer { self.waiters = [] }
            return self.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A counter shared with stub handlers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    @discardableResult func increment() -> Int {
        self.lock.withLock {
            self.value += 1
            return self.value
        }
    }
    var count: Int { self.lock.withLock { self.value } }
}

extension TransportRequest {
    var bearer: String? {
        guard let value = self.header("Authorization"), value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }
    func decodeBody<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: self.body ?? Data()) }
}

extension TransportResponse {
    static func json(_ status: Int, _ value: some Encodable, headers: [String: String] = [:]) -> TransportResponse {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return TransportResponse(
            status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: try! encoder.encode(value))
    }
    static func error(_ status: Int, _ code: ErrorCode, _ message: String = "no", headers: [String: String] = [:]) -> TransportResponse {
        .json(status, ErrorEnvelope(code: code, message: message), headers: headers)
    }
}

/// Stores, clock and transport for one unit test, and sessions built over them.
struct Fixture {
    static let serverURL = URL(string: "https://auth.example.test")!
    let clock: ManualLatchkeyClock
    let store = InMemorySecureStore()
    let defaults = InMemoryKeyValueStore()
    let transport: StubTransport
    /// Where ``LatchkeySession/liveEvents()`` connects.
    let webSocket: FakeWebSocketTransport

    /// A fixture whose session reads `clock` (which the stub handler may read too) and opens WebSockets through `webSocket`.
    init(
        clock: ManualLatchkeyClock = ManualLatchkeyClock(), webSocket: FakeWebSocketTransport = FakeWebSocketTransport(),
        _ handler: @escaping StubTransport.Handler = { _ in TransportResponse(status: 404) }
    ) {
        self.clock = clock
        self.webSocket = webSocket
        self.transport = StubTransport(handler)
    }

    func session(_ configure: (inout LatchkeySession.Configuration) -> Void = { _ in }) -> LatchkeySession {
        var configuration = LatchkeySession.Configuration(serverURL: Self.serverURL)
        configure(&configuration)
        return LatchkeySession(
            configuration: configuration, secureStore: self.store, defaults: self.defaults, transport: self.transport, clock: self.clock,
            webSocketTransport: self.webSocket)
    }

    /// Stores a device session with `accessToken`/`refreshToken` expiring `lifetime` seconds from now; returns the device ID.
    @discardableResult
    func storeSession(
        access: String = "access-1", refresh: String? = "refresh-1", kind: SessionKind = .session, lifetime: TimeInterval = 900
    ) throws -> UUID {
        let deviceID = UUID()
        let session = StoredSession(
            kind: kind, userID: "user", sessionID: "session-1", accessToken: access,
            accessTokenExpiresAt: self.clock.now().addingTimeInterval(lifetime), refreshToken: refresh)
        try self.store.save(StoredCredentials(deviceID: deviceID, deviceSecret: "secret-1", deviceKey: DeviceKey.generate(), session: session))
        self.defaults.set(deviceID.uuidString, forKey: "latchkey.device-id")
        return deviceID
    }
}

enum Samples {
    static func pair(_ n: Int, userID: String = "user", secret: String? = nil) -> TokenPairResponse {
        TokenPairResponse(
            accessToken: "access-\(n)", expiresIn: 900, refreshToken: "refresh-\(n)", refreshTokenExpiresIn: 2_592_000, userID: userID,
            sessionID: "session-1", deviceSecret: secret)
    }

    static func profile(_ userID: String = "user") -> UserProfile {
        UserProfile(
            userID: userID, kind: .device, createdAt: Date(timeIntervalSince1970: 1_800_000_000), tokenKind: .session, sessionID: "session-1",
            identities: [], devices: [])
    }

    /// A profile's JSON with `kind` and `token_kind` as given (values a newer server may send).
    static func profileJSON(kind: String, tokenKind: String) -> Data {
        var object = (try? JSONSerialization.jsonObject(with: TransportResponse.json(200, Self.profile("u-1")).body)) as? [String: Any] ?? [:]
        object["kind"] = kind
        object["token_kind"] = tokenKind
        return (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
    }

    /// `GET /auth/me` accepting only `token`.
    static func me(accepting tokens: Set<String>, _ request: TransportRequest) -> TransportResponse {
        tokens.contains(request.bearer ?? "") ? .json(200, Self.profile()) : .error(401, .invalidToken, "Token expired.")
    }
}
