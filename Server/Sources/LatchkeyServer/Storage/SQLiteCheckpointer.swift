import Foundation
import Logging
import NIOPosix
import SQLKit
import ServiceLifecycle

/// Checkpoints the SQLite write-ahead log from a connection of its own, off the request path.
///
/// A checkpoint copies committed pages into the database file and syncs it; run by the committing
/// writer (SQLite's default), that stalls every request queued behind the write lock. A passive
/// checkpoint here runs beside the writer instead, on a thread-pool thread, four times a second.
struct SQLiteCheckpointer {
    let path: String
    let logger: Logger

    func run() async throws {
        let connection = try InlineSQLiteConnection(path: self.path, logger: self.logger)
        defer { connection.close() }
        try await connection.raw("PRAGMA busy_timeout = 5000").run()
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(250)) }
            } catch { return }
            do {
                try await NIOThreadPool.singleton.runIfActive {
                    try connection.run(SQLRaw("PRAGMA wal_checkpoint(PASSIVE)"))
                }
            } catch {
                self.logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
