import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// PostgreSQL, for several server processes on one database: a pool of connections (PostgresNIO's
/// `PostgresClient`) shared by every request of this process.
///
/// Each ``transaction(_:)`` runs on one pooled connection between `BEGIN` and `COMMIT` (READ COMMITTED);
/// the stores make their read-modify-write steps safe under concurrency with conditional updates and
/// row or advisory locks. Every operation — waiting for a connection included — is bounded by
/// `database.timeout` (a ``patientTransaction(_:)``, the migrations', only in waiting for its connection): when
/// PostgreSQL is away, callers get ``StoreError/unavailable(_:)`` (HTTP 503) within that bound instead of waiting, and
/// the pool reconnects by itself once PostgreSQL is back.
///
/// The pool (PostgresNIO's `PostgresClient`, itself a `Service`) runs in ``run()``: in `serve`'s service group, or for
/// the length of a CLI call; operations wait for it to be running.
package final class PostgresLatchkeyDatabase: LatchkeyDatabase {
    /// A `postgres://` URL, read into PostgresNIO's configuration.
    package struct Location: Sendable, CustomStringConvertible {
        package var configuration: PostgresClient.Configuration
        /// One connection's configuration, for ``PostgresLatchkeyDatabase/diagnose()``.
        package var connection: PostgresConnection.Configuration
        /// The URL without its password, for logs and messages.
        package let description: String

        /// Reads `postgres://user:password@host:port/database?sslmode=disable&search_path=name`.
        ///
        /// `sslmode` is `disable`, `prefer` (the default: TLS when the server offers it, unchecked), `require` (TLS,
        /// certificate unchecked, as libpq), `verify-ca` (TLS with a certificate from `sslrootcert=<file>`'s roots, or the
        /// system's) or `verify-full` (and the host name); `search_path` sets the schema the tables live in (default: the
        /// user's default, `public`).
        package init(url: String) throws {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                scheme == "postgres" || scheme == "postgresql"
            else { throw StoreError.unavailable("not a postgres:// URL") }
            guard let host = components.host, !host.isEmpty else { throw StoreError.unavailable("the PostgreSQL URL names no host") }
            guard let user = components.user, !user.isEmpty else { throw StoreError.unavailable("the PostgreSQL URL names no user") }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
            // As libpq: `require` encrypts without checking the certificate, `verify-ca` checks it against the trusted
            // roots (`sslrootcert=<file>`, else the system's), `verify-full` also checks the host name.
            var client = TLSConfiguration.makeClientConfiguration()
            if let roots = query["sslrootcert"], !roots.isEmpty { client.trustRoots = .file(roots) }
            let mode = query["sslmode"] ?? "prefer"
            switch mode {
            case "disable", "allow", "prefer", "require": client.certificateVerification = .none
            case "verify-ca": client.certificateVerification = .noHostnameVerification
            case "verify-full": client.certificateVerification = .fullVerification
            default: throw StoreError.unavailable("sslmode \(mode) is not one of disable, prefer, require, verify-ca, verify-full")
            }
            let tls: PostgresClient.Configuration.TLS
            let connectionTLS: PostgresConnection.Configuration.TLS
            switch mode {
            case "disable": (tls, connectionTLS) = (.disable, .disable)
            case "allow", "prefer": (tls, connectionTLS) = (.prefer(client), try .prefer(.init(configuration: client)))
            default: (tls, connectionTLS) = (.require(client), try .require(.init(configuration: client)))
            }
            let (username, password) = (user.removingPercentEncoding ?? user, components.password.map { $0.removingPercentEncoding ?? $0 })
            let name = database.isEmpty ? nil : (database.removingPercentEncoding ?? database)
            self.configuration = PostgresClient.Configuration(
                host: host, port: components.port ?? 5432, username: username, password: password, database: name, tls: tls)
            self.connection = PostgresConnection.Configuration(
                host: host, port: components.port ?? 5432, username: username, password: password, database: name, tls: connectionTLS)
            if let searchPath = query["search_path"], !searchPath.isEmpty {
                self.configuration.options.additionalStartupParameters.append(("search_path", searchPath))
                self.connection.options.additionalStartupParameters.append(("search_path", searchPath))
            }
            var shown = components
            shown.password = nil
            self.description = shown.string ?? "postgres://\(host)"
        }

        /// Whether `value` names PostgreSQL rather than an SQLite file.
        package static func isPostgres(_ value: String) -> Bool {
            let lowered = value.lowercased()
            return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
        }
    }

    let client: PostgresClient
    private let location: Location
    /// The bound on every operation (`database.timeout`).
    private let timeoutSeconds: TimeInterval
    private var timeout: Duration { .milliseconds(Int64(self.timeoutSeconds * 1000)) }
    private let logger: Logger
    package var dialect: DatabaseDialect { .postgresql }

    /// How many pooled connections ``listen(channel:_:)`` holds for as long as the server runs: one for the
    /// revocation feed, one for the user-change feed. The pool has that many more than `maximumConnections`, so that
    /// listening never takes a connection a request needs (with `database.max-connections` 2, two listeners would
    /// otherwise leave none, and every request would wait out the timeout and answer 503).
    package static let listeningConnections = 2

    /// A connection pool for `location`; nothing connects until it runs and the first operation asks.
    ///
    /// - Parameters:
    ///   - timeout: the bound on every operation, waiting for a connection included.
    ///   - maximumConnections: the connections for operations; the pool holds ``listeningConnections`` more.
    package init(location: Location, timeout: TimeInterval = 5, maximumConnections: Int = 20, logger: Logger) {
        var configuration = location.configuration
        configuration.options.maximumConnections = max(1, maximumConnections) + Self.listeningConnections
        configuration.options.connectTimeout = .milliseconds(Int64(max(0.1, timeout) * 1000))
        self.location = location
        self.timeoutSeconds = max(0.1, timeout)
        self.logger = logger
        var background = logger
        // The pool retries a lost server on its own; its per-attempt messages would flood the log.
        background.logLevel = max(logger.logLevel, .error)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: background)
    }

    /// A connection pool for `url` (see ``init(location:timeout:maximumConnections:logger:)``).
    package convenience init(url: String, timeout: TimeInterval = 5, maximumConnections: Int = 20, logger: Logger) throws {
        self.init(location: try Location(url: url), timeout: timeout, maximumConnections: maximumConnections, logger: logger)
    }

    /// Runs the connection pool until the task is cancelled or the service group shuts down.
    package func run() async throws {
        await cancelWhenGracefulShutdown { await self.client.run() }
    }

    /// A transaction answered 503 at the deadline has changed nothing, and never will: PostgreSQL itself ends a
    /// statement still running then (`statement_timeout`, set for this transaction from what remains of the deadline;
    /// SQLSTATE 57014), and a transaction whose caller was already answered rolls back instead of committing. Once
    /// `COMMIT` is sent, the caller waits for its outcome.
    package func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.transaction(patient: false, body)
    }

    /// A transaction with no deadline (migrations): it waits for its connection within the timeout, so an unreachable
    /// PostgreSQL still fails fast, and from then on for as long as it takes (another process's migration, a table
    /// rebuild, an index build), with no `statement_timeout` of its own.
    package func patientTransaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.transaction(patient: true, body)
    }

    private func transaction<T: Sendable>(
        patient: Bool, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await self.withConnection { connection, deadline in
            // Patient: the deadline bounded the wait for the connection; from here on the caller waits for the outcome.
            if patient, !deadline.claimCommit() { throw StoreError.unavailable("no connection within \(self.timeout)") }
            let sql = ConnectionBoundSQLDatabase(connection)
            try await sql.raw("BEGIN").run()
            do {
                if !patient {
                    // 0 would turn the timeout off: at least a millisecond.
                    let milliseconds = max(1, Int(deadline.remaining / .milliseconds(1)))
                    try await sql.raw("SELECT set_config('statement_timeout', \(bind: "\(milliseconds)ms"), true)").run()
                }
                let result = try await body(sql)
                guard patient || deadline.claimCommit() else { throw StoreError.unavailable("no answer within \(self.timeout)") }
                try await sql.raw("COMMIT").run()
                return result
            } catch {
                do {
                    try await sql.raw("ROLLBACK").run()
                } catch {
                    // A connection that may still be inside the transaction must not go back to the pool.
                    try? await connection.close()
                }
                throw error
            }
        }
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.withConnection { connection, _ in try await body(ConnectionBoundSQLDatabase(connection)) }
    }

    /// LISTEN on one pooled connection, held until the calling task is cancelled (no deadline: it waits for
    /// notifications, not for an answer). Notifications are delivered when the notifying transaction commits.
    package func listen(channel: String, _ receive: @escaping @Sendable (String) -> Void) async throws -> Bool {
        do {
            try await self.client.withConnection { connection in
                try await connection.listen(on: channel) { notifications in
                    for try await notification in notifications { receive(notification.payload) }
                }
            }
        } catch let error as PSQLError {
            throw Self.translate(error)
        }
        return true
    }

    /// Nothing to do: the pool closes when ``run()``'s task ends.
    package func close() async {}

    /// Connects once, apart from the pool (whose requests only wait when the server is away), and says what failed.
    package func diagnose() async -> DatabaseFailure? {
        var connection = self.location.connection
        connection.options.connectTimeout = .milliseconds(Int64(self.timeoutSeconds * 1000))
        let configuration = connection
        let logger = Logger(label: "latchkey.postgres.diagnosis", factory: { _ in SwiftLogNoOpLogHandler() })
        let timeout = self.timeout
        let outcome: Result<Void, any Error>? = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                    try? await connection.close()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case .success: return nil
        case .failure(let error): return self.failure(error)
        case nil: return DatabaseFailure(kind: .timedOut, description: "\(self.where): no answer within \(self.seconds) seconds")
        }
    }

    private var `where`: String { "PostgreSQL at \(self.location.description)" }
    private var seconds: String { String(format: "%g", self.timeoutSeconds) }

    /// A connection attempt's error, said in words (never the password).
    private func failure(_ error: any Error) -> DatabaseFailure {
        if let error = error as? PSQLError {
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                let user = self.location.connection.username
                switch state {
                case "28P01", "28000":
                    return DatabaseFailure(kind: .authenticationFailed, description: "\(self.where): authentication failed for user \(user)")
                case "3D000":
                    let name = self.location.connection.database ?? user
                    return DatabaseFailure(kind: .noSuchDatabase, description: "\(self.where): database \"\(name)\" does not exist")
                case "57P03", "53300", "57P01":
                    return DatabaseFailure(
                        kind: .notReady, description: "\(self.where): the server is not accepting connections yet (SQLSTATE \(state))")
                default:
                    return DatabaseFailure(kind: .other, description: "\(self.where): the server refused the connection (SQLSTATE \(state))")
                }
            case .sslUnsupported:
                return DatabaseFailure(
                    kind: .tlsRefused, description: "\(self.where): TLS refused by the server (sslmode=require, and it offers no TLS)")
            case .connectionError:
                return self.failure(underlying: error.underlying)
            default:
                return DatabaseFailure(kind: .other, description: "\(self.where): \(error.code)")
            }
        }
        return self.failure(underlying: error)
    }

    private func failure(underlying: (any Error)?) -> DatabaseFailure {
        let text = underlying.map { String(describing: $0) } ?? ""
        if text.localizedCaseInsensitiveContains("refused") || text.contains("errno: 111") {
            return DatabaseFailure(kind: .connectionRefused, description: "\(self.where): connection refused (is PostgreSQL running?)")
        }
        if text.localizedCaseInsensitiveContains("timeout") || text.localizedCaseInsensitiveContains("timed out") {
            return DatabaseFailure(kind: .timedOut, description: "\(self.where): no answer within \(self.seconds) seconds")
        }
        if text.localizedCaseInsensitiveContains("ssl") || text.localizedCaseInsensitiveContains("tls") {
            return DatabaseFailure(kind: .tlsRefused, description: "\(self.where): the TLS handshake failed")
        }
        return DatabaseFailure(
            kind: .other, description: "\(self.where): cannot connect (\(underlying.map { "\(type(of: $0))" } ?? "unknown error"))")
    }

    /// Leases a connection for `body`, within the timeout, translating PostgreSQL's failures.
    private func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection, any OperationDeadline) async throws -> T
    ) async throws -> T {
        let client = self.client
        do {
            return try await withDeadline(self.timeout) { deadline in
                try await client.withConnection { connection in try await body(connection, deadline) }
            }
        } catch let error as PSQLError {
            throw Self.translate(error)
        }
    }

    /// Integrity violations (class 23: unique, foreign key, not null, check) are conflicts, as on SQLite;
    /// lost connections, refused connections and a closing pool mean the database is unavailable.
    /// Anything else the server reports (a bug in a statement) stays an internal error.
    static func translate(_ error: PSQLError) -> any Error {
        if error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? ""
            if state.hasPrefix("23") { return StoreError.conflict }
            // Connection exceptions, insufficient resources, operator intervention (shutdown),
            // serialization failures and deadlocks: the operation had no effect; try again later.
            if ["08", "53", "57", "40"].contains(where: state.hasPrefix) {
                return StoreError.unavailable("PostgreSQL refused the operation (SQLSTATE \(state))")
            }
            return error
        }
        switch error.code {
        case .queryCancelled, .clientClosedConnection, .serverClosedConnection, .connectionError, .uncleanShutdown, .poolClosed,
            .sslUnsupported, .failedToAddSSLHandler, .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
            return StoreError.unavailable("PostgreSQL is not reachable (\(error.code))")
        default:
            return error
        }
    }
}

/// The bound of an operation run by ``withDeadline(_:_:)``, as the operation sees it.
package protocol OperationDeadline: Sendable {
    /// The time left before the caller is answered 503 (negative once it has been).
    var remaining: Duration { get }
    /// Asks to make the operation's effects permanent: true while the caller still waits, who from then on waits for
    /// the operation's outcome whatever the time; false when the caller was already answered (503 or cancelled), and
    /// the operation must then undo what it did.
    func claimCommit() -> Bool
}

/// Runs `operation` in a task of its own and answers within `timeout`: with its result, or with
/// ``StoreError/unavailable(_:)`` when it takes longer (the operation is then cancelled and left to end by itself; it
/// learns through ``OperationDeadline/claimCommit()`` that it must not commit).
package func withDeadline<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable (any OperationDeadline) async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>(end: ContinuousClock.now + timeout)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.begin(
                continuation,
                work: Task {
                    do { race.finish(.success(try await operation(race)), byWork: true) } catch { race.finish(.failure(error), byWork: true) }
                },
                timer: Task {
                    do { try await Task.sleep(for: timeout) } catch { return }
                    race.finish(.failure(StoreError.unavailable("no answer within \(timeout)")))
                })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// Whichever of the work, the timer or cancellation comes first resumes the caller; the others are cancelled. Once the
/// work has claimed its commit, only the work resumes the caller.
private final class DeadlineRace<T: Sendable>: OperationDeadline {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var outcome: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
        var committing = false
    }
    private let state = Mutex(State())
    private let end: ContinuousClock.Instant

    init(end: ContinuousClock.Instant) { self.end = end }

    var remaining: Duration { self.end - ContinuousClock.now }

    func claimCommit() -> Bool {
        self.state.withLock { state in
            if state.outcome != nil { return false }
            state.committing = true
            return true
        }
    }

    func begin(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let early: Result<T, any Error>? = self.state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            state.tasks = [work, timer]
            return nil
        }
        if let early {
            work.cancel()
            timer.cancel()
            continuation.resume(with: early)
        }
    }

    func finish(_ outcome: Result<T, any Error>, byWork: Bool = false) {
        let (continuation, tasks): (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) = self.state.withLock { state in
            if state.outcome != nil || (state.committing && !byWork) { return (nil, []) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: outcome)
    }
}
