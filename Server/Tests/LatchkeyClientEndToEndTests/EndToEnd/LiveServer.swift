import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Logging

/// A Latchkey server on an ephemeral 127.0.0.1 port over a fresh SQLite file, with a manual clock, plus two routes of an
/// app's own backend: `GET /api/v1/assets/echo` records the credentials each request carried, and
/// `POST /api/v1/compose/stream` streams two events.
struct LiveServer: Sendable {
    let services: LatchkeyServices
    let clock: ManualClock
    let url: URL
    let seen: SeenHeaders
    /// The streaming route (`POST /api/v1/compose/stream`, seed 000's composer) sends its second event only once the
    /// client has seen the first, which a client that buffers whole bodies never does.
    let stream: StreamGate
    let directory: URL
    static let masterKey = Data(repeating: 7, count: 32).base64EncodedString()
    var databasePath: String { self.services.configuration.database }

    /// Runs `body` against a fresh server; `limits` are off unless given, the clock starts at `clock`'s time.
    ///
    /// With `servingEvents`, the server is the application `latchkey serve` runs (its background services, and WebSocket
    /// upgrades of `GET /api/v1/events`), without the two app routes.
    static func run(
        limits: AbuseLimits = .off, clock: ManualClock = ManualClock(start: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))),
        servingEvents: Bool = false, configure: (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @Sendable (LiveServer) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-client-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = LatchkeyConfiguration()
        configuration.database = directory.appendingPathComponent("latchkey.sqlite").path
        configuration.publicURL = "http://latchkey.test"
        configuration.masterKey = Self.masterKey
        configuration.port = 0
        configuration.limits = limits
        configure(&configuration)
        var logger = Logger(label: "latchkey-client-e2e")
        logger.logLevel = .critical
        defer { try? FileManager.default.removeItem(at: directory) }
        try await LatchkeyServices.withServices(configuration: configuration, clock: clock, recordIssuer: true, logger: logger) { services in
            let seen = SeenHeaders()
            if servingEvents {
                let background = services.backgroundServices.filter { !($0 is any LatchkeyDatabase) }
                let app = buildApplication(services: services, background: background, preparing: false, logger: logger)
                return try await app.test(.live) { client in
                    let url = URL(string: "http://127.0.0.1:\(client.port!)")!
                    try await body(LiveServer(services: services, clock: clock, url: url, seen: seen, stream: StreamGate(), directory: directory))
                }
            }
            let router = buildRouter(services: services)
            router.get("api/v1/assets/echo") { request, _ -> String in
                seen.record(authorization: request.headers[.authorization], deviceID: request.headers[HTTPField.Name(LatchkeyHeader.deviceID)!])
                return "ok"
            }
            let stream = StreamGate()
            router.post("api/v1/compose/stream") { request, _ -> Response in
                seen.record(authorization: request.headers[.authorization], deviceID: request.headers[HTTPField.Name(LatchkeyHeader.deviceID)!])
                return Response(
                    status: .ok, headers: [.contentType: "text/event-stream"],
                    body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: "data: one\n\n"))
                        await stream.waitUntilTheClientSawTheFirstEvent()
                        try await writer.write(ByteBuffer(string: "data: two\n\n"))
                        try await writer.finish(nil)
                    })
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(.live) { client in
                let url = URL(string: "http://127.0.0.1:\(client.port!)")!
                try await body(LiveServer(services: services, clock: clock, url: url, seen: seen, stream: stream, directory: directory))
            }
        }
    }
}

/// The credentials requests to the echo route carried.
final class SeenHeaders: @unchecked Sendable {
    struct Seen: Equatable {
        var authorization: String?
        var deviceID: String?
    }
    private let lock = NSLock()
    private var seen: [Seen] = []

    func record(authorization: String?, deviceID: String?) {
        self.lock.withLock { self.seen.append(Seen(authorization: authorization, deviceID: deviceID)) }
    }
    var last: Seen? { self.lock.withLock { self.seen.last } }
}

/// The streaming route waits here between its two events, five seconds at most.
final class StreamGate: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = false
    private var expired = false

    /// Called by the client when the first event arrived.
    func clientSawTheFirstEvent() { self.lock.withLock { self.seen = true } }
    /// Whether the route stopped waiting without the client having seen the first event.
    var timedOut: Bool { self.lock.withLock { self.expired } }

    func waitUntilTheClientSawTheFirstEvent() async {
        for _ in 0..<500 {
            if self.lock.withLock({ self.seen }) { return }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        self.lock.withLock { self.expired = true }
    }
}

/// URLSession, with every request path counted.
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let inner = URLSessionTransport()
    private let lock = NSLock()
    private var paths: [String] = []

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        self.lock.withLock { self.paths.append(request.url.path) }
        return try await self.inner.send(request)
    }

    func stream(_ request: TransportRequest) async throws -> TransportStream {
        self.lock.withLock { self.paths.append(request.url.path) }
        return try await self.inner.stream(request)
    }

    func count(_ path: String) -> Int { self.lock.withLock { self.paths.filter { $0 == path }.count } }
}

/// One installed app's persistent state (its Keychain and UserDefaults) and clock; each `launch()` is a new process.
struct AppInstall {
    let store = InMemorySecureStore()
    let defaults = InMemoryKeyValueStore()
    let clock: ManualLatchkeyClock
    let transport = CountingTransport()
    let server: LiveServer

    /// An install whose clock reads what the server's clock reads.
    init(server: LiveServer) {
        self.server = server
        self.clock = ManualLatchkeyClock(start: server.clock.now())
    }

    /// A launch of the app; `transport` replaces the counting one.
    func launch(
        transport: (any HTTPTransport)? = nil, _ configure: (inout LatchkeySession.Configuration) -> Void = { _ in }
    ) -> LatchkeySession {
        var configuration = LatchkeySession.Configuration(serverURL: self.server.url)
        configure(&configuration)
        return LatchkeySession(
            configuration: configuration, secureStore: self.store, defaults: self.defaults, transport: transport ?? self.transport, clock: self.clock)
    }

    /// Moves both the server's and the app's clocks.
    func advance(by seconds: TimeInterval) {
        self.server.clock.advance(by: seconds)
        self.clock.advance(by: seconds)
    }
}
