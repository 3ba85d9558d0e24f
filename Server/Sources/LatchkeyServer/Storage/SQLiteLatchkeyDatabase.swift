import Foundation
import Logging
import SQLKit
import Synchronization

/// The embedded default: one SQLite file, a writer connection and two reader connections.
///
/// Transactions run one at a time on the writer. Reads run on the readers, beside the writer and each
/// other: in WAL mode a read sees every transaction committed before it began. WAL mode also lets the
/// CLI read and write the same file while a server runs; either side waits for the other's short transactions
/// instead of failing: SQLite's own `busy_timeout` only for a millisecond (it sleeps on the calling thread, a thread of
/// Swift's cooperative pool), then ``InlineSQLiteConnection`` suspends and retries until the timeout.
package final class SQLiteLatchkeyDatabase: LatchkeyDatabase {
    private struct Guarded: Sendable {
        let connection: InlineSQLiteConnection
        let lock: AsyncLock
    }

    private let writer: Guarded
    private let readers: [Guarded]
    private let nextReader = Atomic<Int>(0)
    private let path: String
    private let logger: Logger
    package var dialect: DatabaseDialect { .sqlite }

    /// Opens (creating when missing) the database file at `path`; a transaction waiting longer than `timeout` seconds
    /// for the single writer gives up with ``StoreError/unavailable(_:)`` (HTTP 503).
    package init(path: String, timeout: TimeInterval = 5, logger: Logger) async throws {
        self.path = path
        self.logger = logger
        let wait = Duration.milliseconds(Int64(max(0.001, timeout) * 1000))
        Self.createPrivately(path)
        self.writer = Guarded(connection: try await Self.open(path: path, busyTimeout: wait, logger: logger), lock: AsyncLock(timeout: wait))
        self.readers = [
            Guarded(connection: try await Self.open(path: path, busyTimeout: wait, logger: logger), lock: AsyncLock(timeout: wait)),
            Guarded(connection: try await Self.open(path: path, busyTimeout: wait, logger: logger), lock: AsyncLock(timeout: wait)),
        ]
    }

    /// Creates a missing database file empty with mode 0600 before SQLite opens it (SQLite would create it 0644): it
    /// holds token and secret hashes. SQLite gives the `-wal` and `-shm` files the database file's mode.
    private static func createPrivately(_ path: String) {
        guard path != ":memory:", !path.hasPrefix("file:") else { return }
        createEmptyUnlessPresent(path, mode: 0o600)
    }

    private static func open(path: String, busyTimeout: Duration, logger: Logger) async throws -> InlineSQLiteConnection {
        let connection = try InlineSQLiteConnection(path: path, busyTimeout: busyTimeout, logger: logger)
        let pragmas = [
            // Reads through a memory map and a page cache (16 MiB per connection), not a pread per page.
            "PRAGMA mmap_size = 268435456", "PRAGMA cache_size = -16384",
            "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 1",
            // A running server checkpoints the WAL in the background (SQLiteCheckpointer), outside the
            // writer's lock; this is only the backstop for processes that do not (the CLI, tests).
            "PRAGMA wal_autocheckpoint = 20000", "PRAGMA journal_size_limit = 67108864",
        ]
        for pragma in pragmas {
            try await connection.raw(SQLQueryString(pragma)).run()
        }
        return connection
    }

    package func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.transaction(patient: false, body)
    }

    /// Waits for the writer, and for another process's write lock, however long it takes.
    package func patientTransaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.transaction(patient: true, body)
    }

    private func transaction<T: Sendable>(
        patient: Bool, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        let connection = self.writer.connection
        return try await self.writer.lock.withLock(patient: patient) {
            try await connection.execute(sql: SQLRaw("BEGIN IMMEDIATE"), waitingAtMost: patient ? nil : connection.busyTimeout) { _ in }
            do {
                let result = try await body(connection)
                try await connection.raw("COMMIT").run()
                return result
            } catch {
                try? await connection.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let reader = self.nextReaderConnection()
        // A reader's statements form one snapshot: several queries of one read agree with each other.
        return try await reader.lock.withLock {
            try await reader.connection.raw("BEGIN").run()
            defer { try? reader.connection.run(SQLRaw("COMMIT")) }
            return try await body(reader.connection)
        }
    }

    /// The reader connections in turn.
    private func nextReaderConnection() -> Guarded {
        self.readers[self.nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % self.readers.count]
    }

    package func readStatement<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let reader = self.nextReaderConnection()
        return try await reader.lock.withLock { try await body(reader.connection) }
    }

    /// Checkpoints the WAL from a connection of its own while the server runs (``SQLiteCheckpointer``), so writers
    /// never wait for it.
    package func run() async throws {
        try await SQLiteCheckpointer(path: self.path, logger: self.logger).run()
    }

    package func close() async {
        for guarded in [self.writer] + self.readers {
            // Closing waits for the holder however long it takes: no timeout here.
            _ = try? await guarded.lock.withLock(patient: true) { guarded.connection.close() }
        }
    }
}
