import Foundation
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// A request answered 503 at `database.timeout` on PostgreSQL changed nothing and never will: a second connection holds
/// a lock the request's transaction waits for, past the deadline.
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct DatabaseDeadlineTests {
    @Test func aRegistrationAnswered503UnderAHeldLockIsCancelledAndRolledBackSoTheDeviceRegistersAsNewAfterwards() async throws {
        let server = try await TestServer.make(backend: .postgresql) { $0.databaseTimeout = 2 }
        let holder = try PostgresLatchkeyDatabase(url: server.databasePath, timeout: 60, maximumConnections: 2, logger: TestServer.quietLogger)
        try await server.test(.live) { client in
            try await holder.whileRunning {
                let (release, releaseLock) = AsyncStream<Void>.makeStream()
                let (locked, lockTaken) = AsyncStream<Void>.makeStream()
                let lock = Task {
                    try await holder.transaction { sql in
                        try await sql.raw("LOCK TABLE devices IN ACCESS EXCLUSIVE MODE").run()
                        lockTaken.yield()
                        for await _ in release { break }
                    }
                }
                for await _ in locked { break }

                let deviceID = UUID()
                let refused = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
                #expect(refused.status == .serviceUnavailable)
                #expect(refused.envelope?.error.code == .serviceUnavailable)
                // PostgreSQL itself ends the refused transaction's statement while the lock is still held: nobody waits.
                try await MultiProcessTests.eventually(within: .seconds(15), "the refused registration's statement ending under the lock") {
                    try await Self.waitingForDevices(on: holder) == 0
                }
                releaseLock.finish()
                try await lock.value

                #expect(try await Self.devices(deviceID, on: holder) == 0, "the refused registration's device was stored")
                let again = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
                #expect(again.status == .created, "\(again.text)")
                let secret = try again.decode(TokenPairResponse.self).deviceSecret
                let signIn = try await client.send(
                    .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString, deviceSecret: secret))
                #expect(signIn.status == .ok, "the secret its client was given does not sign the device in: \(signIn.text)")
            }
        }
    }

    /// PostgreSQL ending a transaction's session under it (a shutdown, `pg_terminate_backend`) before its `COMMIT`: the
    /// `COMMIT` is refused as unavailable at once, nothing is written, and the next transaction works. (PostgresNIO alone
    /// never answers a statement written after its connection closed: the request, and the server's graceful shutdown,
    /// waited forever; CI saw it once in the outage test.)
    @Test func aCommitAfterPostgreSQLEndedTheSessionIsRefusedAsUnavailableAtOnceAndWritesNothing() async throws {
        let server = try await TestServer.make(backend: .postgresql)
        let database = try PostgresLatchkeyDatabase(url: server.databasePath, timeout: 5, maximumConnections: 2, logger: TestServer.quietLogger)
        let killer = try PostgresLatchkeyDatabase(url: server.databasePath, timeout: 5, maximumConnections: 1, logger: TestServer.quietLogger)
        try await database.whileRunning {
            try await killer.whileRunning {
                let table = "session_end_\(UUID().uuidString.prefix(8).lowercased())"
                try await killer.transaction { sql in try await sql.raw("CREATE TABLE \(unsafeRaw: table) (id int)").run() }
                // The test's own bound: without the rule the COMMIT below never answers.
                let outcome: String = try await withDeadline(.seconds(20)) { _ in
                    do {
                        try await database.transaction { sql in
                            try await sql.raw("INSERT INTO \(unsafeRaw: table) VALUES (1)").run()
                            let pid = try await sql.raw("SELECT pg_backend_pid() AS pid").first()?.decode(column: "pid", as: Int.self) ?? 0
                            _ = try await killer.read { sql in try await sql.raw("SELECT pg_terminate_backend(\(bind: pid)::int)").run() }
                            let bound = try #require(sql as? ConnectionBoundSQLDatabase)
                            try? await bound.connection.closeFuture.get()
                        }
                        return "committed"
                    } catch StoreError.unavailable {
                        return "unavailable"
                    } catch {
                        return String(reflecting: error)
                    }
                }
                #expect(outcome == "unavailable")
                let rows = try await killer.read { sql in
                    try await sql.raw("SELECT count(*) AS n FROM \(unsafeRaw: table)").first()?.decode(column: "n", as: Int.self)
                }
                #expect(rows == 0)
                let next = try await database.transaction { sql in
                    try await sql.raw("INSERT INTO \(unsafeRaw: table) VALUES (2)").run()
                    return true
                }
                #expect(next)
            }
        }
    }

    /// Backends waiting for a lock on this schema's `devices` table.
    static func waitingForDevices(on database: PostgresLatchkeyDatabase) async throws -> Int {
        try await database.read { sql in
            let row = try await sql.raw("SELECT count(*) AS waiting FROM pg_locks WHERE relation = 'devices'::regclass AND NOT granted").first()
            return try row?.decode(column: "waiting", as: Int.self) ?? 0
        }
    }

    static func devices(_ id: UUID, on database: PostgresLatchkeyDatabase) async throws -> Int {
        try await database.read { sql in
            let row = try await sql.raw("SELECT count(*) AS stored FROM devices WHERE id = \(bind: id.uuidString.lowercased())").first()
            return try row?.decode(column: "stored", as: Int.self) ?? 0
        }
    }
}

/// The rule under PostgreSQL's transactions: an operation whose caller was answered at the deadline may not commit.
struct DeadlineCommitTests {
    @Test func anOperationStillRunningWhenItsCallerWasAnswered503MayNotCommit() async throws {
        let (proceed, letProceed) = AsyncStream<Void>.makeStream()
        let (claims, report) = AsyncStream<Bool>.makeStream()
        await #expect {
            try await withDeadline(.milliseconds(20)) { deadline in
                for await _ in proceed { break }
                report.yield(deadline.claimCommit())
            }
        } throws: { error in
            if case StoreError.unavailable = error { true } else { false }
        }
        letProceed.finish()
        var iterator = claims.makeAsyncIterator()
        #expect(await iterator.next() == false)
    }

    /// Once the operation has claimed its commit, nothing but its own outcome answers the caller: neither the timer nor
    /// (shown here, deterministically) the caller's cancellation.
    @Test func anOperationThatClaimedItsCommitIsWaitedForWhateverHappensMeanwhile() async throws {
        let (proceed, letProceed) = AsyncStream<Void>.makeStream()
        let (claims, report) = AsyncStream<Bool>.makeStream()
        let caller = Task {
            try await withDeadline(.seconds(3600)) { deadline in
                report.yield(deadline.claimCommit())
                for await _ in proceed { break }
                return "committed"
            }
        }
        var iterator = claims.makeAsyncIterator()
        #expect(await iterator.next() == true)
        caller.cancel()
        letProceed.finish()
        #expect(try await caller.value == "committed")
    }
}
