import Foundation
import Logging
import SQLKit

/// The embedded default: one SQLite file, one connection, one transaction at a time.
///
/// WAL mode lets the CLI read and write the same file while a server runs; `busy_timeout` makes
/// either side wait for the other's short transactions instead of failing.
public final class SQLiteLatchkeyDatabase: LatchkeyDatabase {
    private let connection: InlineSQLiteConnection
    private let lock = AsyncLock()
    private let path: String
    public var dialect: DatabaseDialect { .sqlite }

    /// Opens (creating when missing) the database file at `path`.
    public init(path: String, logger: Logger) async throws {
        self.path = path
        self.connection = try InlineSQLiteConnection(path: path, logger: logger)
        let pragmas = [
            // Reads through a memory map and a 32 MiB page cache, not a pread system call per page.
            "PRAGMA mmap_size = 268435456", "PRAGMA cache_size = -32768",
            "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000",
            // A running server checkpoints the WAL in the background (SQLiteCheckpointer), outside the
            // writer's lock; this is only the backstop for processes that do not (the CLI, tests).
            "PRAGMA wal_autocheckpoint = 20000", "PRAGMA journal_size_limit = 67108864",
        ]
        for pragma in pragmas {
            try await self.connection.raw(SQLQueryString(pragma)).run()
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.lock.withLock {
            try await self.connection.raw("BEGIN IMMEDIATE").run()
            do {
                let result = try await body(self.connection)
                try await self.connection.raw("COMMIT").run()
                return result
            } catch {
                try? await self.connection.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.lock.withLock { try await body(self.connection) }
    }

    /// Copies the WAL into the database file on a connection of its own, so writers never wait for it.
    func checkpointer(logger: Logger) -> SQLiteCheckpointer { SQLiteCheckpointer(path: self.path, logger: logger) }

    public func close() async {
        _ = try? await self.lock.withLock { self.connection.close() }
    }
}
