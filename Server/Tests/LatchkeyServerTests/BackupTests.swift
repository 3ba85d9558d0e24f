import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import Synchronization
import Testing

/// A flag one task sets and another reads.
final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { self.value.withLock { $0 } }
    func set() { self.value.withLock { $0 = true } }
}

/// Issue 29, "Backups": `latchkey backup --output FILE` copies a live SQLite database consistently, with its key file.
@Suite struct BackupTests {
    static func backup(database: String, output: String, in directory: URL) async throws -> CLIRun {
        try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: ["backup", "--output", output, "--database", database],
            environment: LatchkeyCLI.environment(), workingDirectory: directory)
    }

    static func directory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func mode(_ path: String) -> Int? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int).map { $0 & 0o777 }
    }

    @Test func aBackupTakenUnderWriteLoadRestoresIntoAServerWhereAnEarlierRefreshTokenStillWorks() async throws {
        let live = try Self.directory("backup-live")
        let database = live.appendingPathComponent("latchkey.sqlite").path
        // The key file beside the database, as SQLite's default.
        let server = try await LatchkeyProcess.start(database: database, masterKey: nil)
        defer { kill(server.pid, SIGKILL) }
        let before = try await server.registerDevice()
        // Stopped by a flag, not by cancelling: a URLSession request cancelled in flight can hang on Linux.
        let stop = StopFlag()
        let load = Task {
            var written = 0
            while !stop.isSet, (try? await server.registerDevice()) != nil { written += 1 }
            return written
        }
        let target = try Self.directory("backup-out")
        let output = target.appendingPathComponent("copy.sqlite").path
        let run = try await Self.backup(database: database, output: output, in: target)
        stop.set()
        let written = await load.value
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == output, "\(run)")
        #expect(written > 0, "the server took writes while the backup ran")
        #expect(Self.mode(output) == 0o600)
        #expect(Self.mode(output + ".key") == 0o600)
        #expect(try String(contentsOfFile: output + ".key", encoding: .utf8) == String(contentsOfFile: database + ".key", encoding: .utf8))

        // Restore: the copy where a new server's database goes, the key file beside it.
        let restored = try Self.directory("backup-restored")
        let restoredDatabase = restored.appendingPathComponent("latchkey.sqlite").path
        try FileManager.default.copyItem(atPath: output, toPath: restoredDatabase)
        try FileManager.default.copyItem(atPath: output + ".key", toPath: restoredDatabase + ".key")
        let second = try await LatchkeyProcess.start(database: restoredDatabase, masterKey: nil)
        defer { kill(second.pid, SIGKILL) }
        let refreshed = try await second.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(before.refreshToken)"}"#)
        #expect(refreshed.status == 200, "\(String(decoding: refreshed.body, as: UTF8.self))")
        #expect(await second.terminate() == 0)
        #expect(await server.terminate() == 0)
    }

    @Test func aBackupNeverOverwritesAndNeverCreatesADatabase() async throws {
        let directory = try Self.directory("backup-refusals")
        let existing = directory.appendingPathComponent("exists.sqlite").path
        try "keep me".write(toFile: existing, atomically: true, encoding: .utf8)
        let server = try await TestServer.make(backend: .sqlite)  // backup copies SQLite (PostgreSQL: pg_dump)
        let refused = try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: ["backup", "--output", existing, "--database", server.databasePath],
            environment: LatchkeyCLI.environment(["LATCHKEY_MASTER_KEY": TestServer.masterKey]), workingDirectory: directory)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("error: \(existing) exists"), "\(refused)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")

        let missing = try await Self.backup(database: "missing.sqlite", output: "copy.sqlite", in: directory)
        #expect(missing.exitCode == 1, "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("missing.sqlite").path))
    }
}
