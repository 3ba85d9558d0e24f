import Foundation
import Testing

@testable import LatchkeyServer

/// The SQLite database holds token and secret hashes: its files are readable by their owner only.
struct SQLiteFileTests {
    @Test func aNewDatabaseAndItsWALAndSharedMemoryFilesAreMode0600() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-sqlite-mode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("latchkey.sqlite").path
        let database = try await SQLiteLatchkeyDatabase(path: path, logger: TestServer.quietLogger)
        try await database.whileRunning {
            try await Migrations.run(on: database, clock: ManualClock(), logger: TestServer.quietLogger)
            #expect(try await SQLLatchkeyStore(database: database).registerUser(id: UUID().uuidString.lowercased(), kind: .device, at: Date()))
            for file in [path, path + "-wal", path + "-shm"] {
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
                #expect(mode & 0o777 == 0o600, "\(file): \(String(mode, radix: 8))")
            }
        }
        await database.close()
    }
}
