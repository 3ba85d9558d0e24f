import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Logging

/// A Latchkey server on an ephemeral 127.0.0.1 port over a fresh SQLite file, with a manual clock, plus one extra
/// route (`GET /api/v1/assets/echo`) that records the credentials each request carried, as an app's asset backend would see them.
@available(LatchkeyServer 1.0, *)
struct LiveServer: Sendable {
    let services: LatchkeyServices
    let clock: ManualClock
    let url: URL
    let seen: SeenHeaders
    let directory: URL
    static let masterKey = Data(repeating: 7, count: 32).base64EncodedString()
    var databasePath: String { self.services.configuration.database }

    /// Runs `body` against a fresh server; `limits` are off unless given, the clock starts at `clock`'s time.
    static func run(
        limits: AbuseLimits = .off, clock: ManualClock = ManualClock(start: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))),
        configure: (inout LatchkeyConfiguration) -> Void = { _ in },
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
            let router = buildRouter(services: services)
            router.get("api/v1/assets/echo") { request, _ -> String in
                seen.record(authorization: request.headers[.authorization], deviceID: request.headers[HTTPField.Name(LatchkeyHeader.deviceID)!])
                return "ok"
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(.live) { client in
                let url = URL(string: "http://127.0.0.1:\(client.port!)")!
                try await body(LiveServer(services: services, clock: clock, url: url, seen: seen, directory: directory))
            }
        }
    }
}

/// The credentials requests to the echo route carried.
@available(LatchkeyServer 1.0, *)
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

/// URLSession, with every request path counted.
@available(LatchkeyServer 1.0, *)
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let inner = URLSessionTransport()
    private let lock = NSLock()
    private var paths: [String] = []

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        self.lock.withLock { self.paths.append(request.url.path) }
        return try await self.inner.send(request)
    }

    func count(_ path: String) -> Int { self.lock.withLock { self.paths.filter { $0 == path }.count } }
}

/// One installed app's persistent state (its Keychain and UserDefaults) and clock; each `launch()` is a new process.
@available(LatchkeyServer 1.0, *)
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

    func launch(_ configure: (inout LatchkeySession.Configuration) -> Void = { _ in }) -> LatchkeySession {
        var configuration = LatchkeySession.Configuration(serverURL: self.server.url)
        configure(&configuration)
        return LatchkeySession(
            configuration: configuration, secureStore: self.store, defaults: self.defaults, transport: self.transport, clock: self.clock)
    }

    /// Moves both the server's and the app's clocks.
    func advance(by seconds: TimeInterval) {
        self.server.clock.advance(by: seconds)
        self.clock.advance(by: seconds)
    }
}
