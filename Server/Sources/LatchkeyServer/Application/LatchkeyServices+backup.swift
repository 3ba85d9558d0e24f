import Crypto
import Foundation
import SQLKit

/// Why a backup was not made.
package struct BackupError: Error, CustomStringConvertible {
    package let description: String
}

extension LatchkeyServices {
    /// A consistent copy of the live SQLite database at `path` — SQLite's `VACUUM INTO`, one read snapshot, while the
    /// server goes on serving — and the master key beside it at `<path>.key`, both mode 0600. Neither file may exist
    /// (nothing is overwritten). PostgreSQL is backed up with `pg_dump` (README, "Backups").
    package func backup(to path: String) async throws -> (database: String, keyFile: String) {
        guard !self.configuration.usesPostgres else {
            throw BackupError(
                description: "backup copies an SQLite database; back up PostgreSQL with pg_dump and keep the master key (README, Backups)")
        }
        let keyFile = path + ".key"
        for file in [path, keyFile] where FileManager.default.fileExists(atPath: file) {
            throw BackupError(description: "\(file) exists: give a new path (a backup never overwrites)")
        }
        // VACUUM INTO fills an empty file: made first, private, so the copy is never readable by others.
        guard writeExclusively(path, "", mode: 0o600) else { throw BackupError(description: "cannot create \(path): \(lastSystemError())") }
        do {
            try await self.database.readStatement { sql in try await sql.raw("VACUUM INTO \(bind: path)").run() }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw BackupError(description: "the copy failed (\(type(of: error))); nothing was kept")
        }
        let key = try Self.masterKey(self.configuration).base64 + "\n"
        guard writeExclusively(keyFile, key, mode: 0o600) else {
            throw BackupError(description: "cannot write the master key to \(keyFile); the database copy is at \(path)")
        }
        return (path, keyFile)
    }
}
