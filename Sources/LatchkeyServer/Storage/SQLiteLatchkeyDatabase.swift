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

    /// Opens (creating when missing) the database file at `path`.
    public init(path: String, logger: Logger) async throws {
        self.connection = try InlineSQLiteConnection(path: path, logger: logger)
        let pragmas = [
            "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000",
            // Checkpoint the WAL every ~16 MB rather than every 4 MB: fewer fsyncs inside request transactions.
            "PRAGMA wal_autocheckpoint = 4000",
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

    public func close() async {
        _ = try? await self.lock.withLock { self.connection.close() }
    }
}
