import Foundation
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Synchronization
import Testing

/// Migrations are not a request: a server starting while another process migrates waits for it past `database.timeout`
/// (issue 27, finding 14 bounds requests only), then migrates and serves.
struct MigrationDeadlineTests {
    /// Another process holds the migrations' advisory lock, as while it migrates; the starting server's migration waits
    /// for it longer than its `database.timeout` (0.2 s).
    @Test(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
    func aServerStartingWhileAnotherProcessMigratesPostgreSQLWaitsPastTheTimeoutAndServes() async throws {
        let url = try await TestPostgres.freshDatabaseURL()
        let holder = try PostgresLatchkeyDatabase(url: url, timeout: 60, maximumConnections: 2, logger: TestServer.quietLogger)
        try await holder.whileRunning {
            try await Self.startWhileLocked(database: url) { whileHeld in
                try await holder.transaction { sql in
                    try await sql.raw("SELECT pg_advisory_xact_lock(hashtextextended('latchkey migrations ' || current_schema(), 0))").run()
                    try await whileHeld()
                }
            } waitedPastTheTimeout: { _ in
                try await Self.migrationsWaiting(longerThan: 0.4, on: holder) > 0
            }
        }
    }

    /// Another process holds SQLite's write lock; the starting server's migration waits for it longer than its
    /// `database.timeout` (0.2 s). SQLite shows no waiter, so the test waits until that much time has passed.
    @Test func aServerStartingWhileAnotherProcessWritesSQLiteWaitsPastTheTimeoutAndServes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("latchkey.sqlite").path
        let holder = try await SQLiteLatchkeyDatabase(path: path, timeout: 60, logger: TestServer.quietLogger)
        try await Self.startWhileLocked(database: path) { whileHeld in
            try await holder.transaction { _ in try await whileHeld() }
        } waitedPastTheTimeout: { elapsed in
            elapsed > .milliseconds(400)
        }
        await holder.close()
    }

    /// Holds a lock through `hold` (which calls its argument while holding it), starts a server on `database` with
    /// `database.timeout` 0.2 s, waits until `waitedPastTheTimeout` says the server's migration has waited past it (or
    /// the start has ended), releases the lock and checks the server starts and serves.
    static func startWhileLocked(
        database: String, hold: @escaping @Sendable (@escaping @Sendable () async throws -> Void) async throws -> Void,
        waitedPastTheTimeout: @escaping @Sendable (Duration) async throws -> Bool
    ) async throws {
        let (release, releaseLock) = AsyncStream<Void>.makeStream()
        let (locked, lockTaken) = AsyncStream<Void>.makeStream()
        let lock = Task {
            try await hold {
                lockTaken.yield()
                for await _ in release { break }
            }
        }
        for await _ in locked { break }

        let ended = Flag()
        let begun = ContinuousClock.now
        let starting = Task {
            defer { ended.set() }
            return try await TestServer.make(database: database) { $0.databaseTimeout = 0.2 }
        }
        try await MultiProcessTests.eventually(within: .seconds(15), "the starting server's migration waiting past database.timeout") {
            if ended.isSet { return true }
            return try await waitedPastTheTimeout(ContinuousClock.now - begun)
        }
        let endedEarly = ended.isSet
        #expect(!endedEarly, "the start ended while the lock was held")
        releaseLock.finish()
        try await lock.value

        let server = try await starting.value
        try await server.test(.live) { client in
            let ready = try await client.send(.get, "/api/v1/health/ready")
            #expect(ready.status == .ok, "\(ready.text)")
            let registered = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            #expect(registered.status == .created, "\(registered.text)")
        }
    }

    /// Backends waiting for this schema's migrations' advisory lock whose statement began more than `seconds` ago.
    static func migrationsWaiting(longerThan seconds: Double, on database: PostgresLatchkeyDatabase) async throws -> Int {
        try await database.read { sql in
            let row = try await sql.raw(
                """
                SELECT count(*) AS waiting FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND NOT l.granted
                AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('latchkey migrations ' || current_schema(), 0)
                AND clock_timestamp() - a.query_start > make_interval(secs => \(bind: seconds))
                """
            ).first()
            return try row?.decode(column: "waiting", as: Int.self) ?? 0
        }
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { self.value.load(ordering: .sequentiallyConsistent) }
        func set() { self.value.store(true, ordering: .sequentiallyConsistent) }
    }
}
