import Foundation
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Logging
import NIOCore
import Testing

/// How a test reaches the server: straight into the router, or over a real socket on 127.0.0.1.
enum Transport: String, CaseIterable, CustomStringConvertible, Sendable {
    case router
    case live

    var setup: TestingSetup { self == .router ? .router : .live }
    var description: String { self.rawValue }
}

/// A Latchkey server over a fresh database — an SQLite file in a temporary directory, or a schema of its
/// own on the test PostgreSQL (``TestBackend/general``) — with a manual clock.
struct TestServer: Sendable {
    static let issuer = "http://latchkey.test"
    static let masterKey = Data(repeating: 7, count: 32).base64EncodedString()
    /// The `metrics.token` of every test server unless it sets its own (without one `GET /metrics` is not served).
    static let metricsToken = "test-metrics-token"

    let services: LatchkeyServices
    let clock: ManualClock
    let directory: URL
    let logger: Logger
    /// The database's own service (PostgreSQL's pool, SQLite's checkpointer), running until ``close()``.
    let databaseService: Task<Void, Never>
    var databasePath: String { self.services.configuration.database }

    /// Opens a server; `configure` may change the defaults (lifetimes, limits…).
    ///
    /// - Parameters:
    ///   - backend: where a fresh database is made; ignored when `database` is given.
    ///   - database: an existing database to open (another test server's ``databasePath``), as a second process would.
    static func make(
        clock: ManualClock = ManualClock(), directory: URL? = nil, backend: TestBackend = .general, database: String? = nil,
        logger: Logger? = nil, configure: (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = LatchkeyConfiguration()
        if let database {
            configuration.database = database
        } else {
            configuration.database = try await backend.freshDatabase(in: directory)
        }
        configuration.databaseMaxConnections = 2
        configuration.databaseTimeout = 30  // hundreds of test servers share one PostgreSQL; the fault tests set their own
        configuration.publicURL = Self.issuer
        configuration.masterKey = Self.masterKey
        configuration.port = 0
        configuration.limits = .off  // tests of limits configure their own
        configuration.metricsToken = Self.metricsToken
        // The pruner and the outbox's poll wait on the server's clock. The pruner's pass is a test's own (`prune()`, its
        // counts checked): none starts beside it unless the test moves the clock a year. The poll runs each minute of the
        // clock, so a mail another process queued (the CLI) goes once the test moves the clock a minute.
        configuration.pruneInterval = 365 * 86_400
        configuration.email.pollInterval = 60
        configure(&configuration)
        let logger = logger ?? Self.quietLogger
        let services = try await LatchkeyServices.make(configuration: configuration, clock: clock, logger: logger)
        let database = services.database
        let databaseService = Task { _ = try? await database.run() }
        do {
            try await services.prepare()
        } catch {
            databaseService.cancel()
            await databaseService.value
            await services.close()
            throw error
        }
        return TestServer(services: services, clock: clock, directory: directory, logger: logger, databaseService: databaseService)
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "latchkey-test")
        logger.logLevel = ProcessInfo.processInfo.environment["LATCHKEY_TEST_LOG"] == "1" ? .debug : .critical
        return logger
    }

    /// Stops the database's service and closes the database.
    func close() async {
        self.databaseService.cancel()
        await self.databaseService.value
        await self.services.close()
    }

    /// Runs `body` against this server through `transport` (the application's other background services beside it),
    /// then closes the database.
    func test<T: Sendable>(_ transport: Transport, _ body: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        let background = self.services.backgroundServices.filter { !($0 is any LatchkeyDatabase) }
        let app = buildApplication(services: self.services, background: background, preparing: false, logger: self.logger)
        defer { try? FileManager.default.removeItem(at: self.directory) }
        do {
            let documented = try DocumentedAnswers.of(buildAPI(services: self.services).operations)
            let result = try await DocumentedAnswers.$current.withValue(documented) { try await app.test(transport.setup, body) }
            await self.close()
            return result
        } catch {
            await self.close()
            throw error
        }
    }
}

/// Runs `body` against a fresh server.
func withServer<T: Sendable>(
    _ transport: Transport, configure: (inout LatchkeyConfiguration) -> Void = { _ in },
    _ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.make(configure: configure)
    return try await server.test(transport) { client in try await body(client, server) }
}

extension TestClientProtocol {
    /// Sends `body` (an Encodable, or a raw JSON string) and returns the response.
    ///
    /// The answer is checked against the server's API document (``DocumentedAnswers``).
    func send(
        _ method: HTTPRequest.Method, _ uri: String, bearer: String? = nil, json body: String? = nil, headers extra: HTTPFields = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        var headers = extra
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if body != nil { headers[.contentType] = "application/json" }
        let response = try await self.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        response.checkDocumented(method, uri, sourceLocation: sourceLocation)
        return response
    }

    func send(
        _ method: HTTPRequest.Method, _ uri: String, bearer: String? = nil, body: some Encodable, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        let data = try JSONEncoder().encode(body)
        return try await self.send(method, uri, bearer: bearer, json: String(decoding: data, as: UTF8.self), sourceLocation: sourceLocation)
    }

    /// Registers a new device and returns its token pair (with its device secret).
    func registerDevice(_ deviceID: UUID = UUID()) async throws -> TokenPairResponse {
        let response = try await self.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
        guard response.status == .created else { throw TestFailure("register-device answered \(response.status)") }
        return try response.decode(TokenPairResponse.self)
    }
}

extension TestResponse {
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: Data(self.body.readableBytesView))
    }

    /// The error envelope of an error response.
    var envelope: ErrorEnvelope? { try? self.decode(ErrorEnvelope.self) }

    var text: String { String(buffer: self.body) }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
