import Foundation
import Logging
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO

/// The embedded default: one SQLite file, one connection, transactions serialised in process.
///
/// WAL mode lets the CLI read and write the same file while a server runs; `busy_timeout` makes
/// either side wait for the other's short transactions instead of failing.
public final class SQLiteLatchkeyDatabase: LatchkeyDatabase {
    private let connection: SQLiteConnection
    private let sql: any SQLDatabase
    private let lock = AsyncLock()

    /// Opens (creating when missing) the database file at `path`.
    public init(path: String, logger: Logger) async throws {
        do {
            self.connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw StoreError.unavailable("cannot open SQLite database at \(path): \(error)")
        }
        // Statements carry hashes and secrets as binds: never log them.
        self.sql = self.connection.sql(queryLogLevel: nil)
        for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000"] {
            try await self.sql.raw(SQLQueryString(pragma)).run()
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.lock.withLock {
            try await Self.translatingErrors {
                try await self.sql.raw("BEGIN IMMEDIATE").run()
                do {
                    let result = try await body(self.sql)
                    try await self.sql.raw("COMMIT").run()
                    return result
                } catch {
                    try? await self.sql.raw("ROLLBACK").run()
                    throw error
                }
            }
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await self.lock.withLock {
            try await Self.translatingErrors { try await body(self.sql) }
        }
    }

    public func close() async {
        try? await self.connection.close()
    }

    private static func translatingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SQLiteError {
            switch error.reason {
            case .constraint, .constraintUniqueFailed, .constraintPrimaryKeyFailed, .constraintForeignKeyFailed: throw StoreError.conflict
            default: throw StoreError.unavailable(error.message)
            }
        }
    }
}
