import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import Testing

/// PostgreSQL going away under a running server, on a cluster of the test's own (`scripts/pg-cluster`),
/// which the test stops and starts again.
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct DatabaseFaultTests {
    /// The repository's `scripts/pg-cluster`, four folders above this file (`<repo>/Server/Tests/LatchkeyServerTests/`).
    static let clusterScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/pg-cluster")

    /// A cluster made for one test; destroyed by `destroy()`.
    struct Cluster {
        let directory: String
        let port: Int

        static func create(_ options: [String] = []) async throws -> Cluster {
            let made = try await Self.script(["create"] + options)
            let directory = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let cluster = Cluster(directory: directory, port: try ServeCommandTests.freePort())
            try await cluster.start()
            return cluster
        }

        var url: String { "postgres://latchkey@127.0.0.1:\(self.port)/postgres?sslmode=disable" }

        func start() async throws { _ = try await Self.script(["start", self.directory, String(self.port)]) }
        func stop() async throws { _ = try await Self.script(["stop", self.directory]) }
        func destroy() async { _ = try? await Self.script(["destroy", self.directory]) }

        @discardableResult
        static func script(_ arguments: [String]) async throws -> ProcessResult {
            let run = try await ProcessRunner.run(
                URL(fileURLWithPath: "/bin/bash"), arguments: [DatabaseFaultTests.clusterScript.path] + arguments,
                environment: ProcessInfo.processInfo.environment, workingDirectory: FileManager.default.temporaryDirectory)
            guard run.exitCode == 0 else { throw TestFailure("scripts/pg-cluster \(arguments.joined(separator: " ")) failed: \(run)") }
            return run
        }
    }

    @Test func whenPostgreSQLGoesAwayRequestsGet503QuicklyReadinessSaysSoAndTheServerRecoversByItself() async throws {
        let cluster = try await Cluster.create()
        var server: LatchkeyProcess?
        do {
            let process = try await LatchkeyProcess.start(database: cluster.url, environment: ["LATCHKEY_DATABASE_TIMEOUT": "2"])
            server = process
            let before = try await process.registerDevice()
            #expect(try await process.send("GET", "api/v1/health/ready").status == 200)

            // Traffic that needs the database keeps coming while the cluster stops. It ends on a flag, not by
            // cancellation: a URLSession request cancelled in flight may never return on Linux.
            let stop = StopFlag()
            let traffic = Task {
                var statuses: [Int] = []
                while !stop.isSet {
                    do {
                        let answer = try await process.send(
                            "POST", "api/v1/auth/register-device", json: #"{"device_id":"\#(UUID().uuidString)"}"#, timeout: 20)
                        statuses.append(answer.status)
                        if answer.status != 201 && answer.status != 503 { break }
                    } catch {
                        statuses.append(-1)  // no answer at all (e.g. a 20 s timeout)
                        break
                    }
                }
                return statuses
            }
            try await cluster.stop()

            // A request that needs the database: 503 with the envelope, within the timeout (2 s) and some slack.
            let deviceID = UUID()
            let started = ContinuousClock.now
            let refused = try await process.send(
                "POST", "api/v1/auth/register-device", json: #"{"device_id":"\#(deviceID.uuidString)"}"#, timeout: 20)
            let waited = ContinuousClock.now - started
            #expect(refused.status == 503)
            #expect(refused.envelope?.error.code == .serviceUnavailable, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(waited < .seconds(10), "503 came after \(waited)")
            let refresh = try await process.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(before.refreshToken)"}"#)
            #expect(refresh.status == 503)
            #expect(try await process.send("GET", "api/v1/health/ready").status == 503)
            #expect(try await process.send("GET", "api/v1/health").status == 200)  // liveness: the process is fine

            try await cluster.start()
            try await MultiProcessTests.eventually(within: .seconds(30), "readiness after PostgreSQL came back") {
                try await process.send("GET", "api/v1/health/ready").status == 200
            }
            stop.set()
            let statuses = await traffic.value
            #expect(Set(statuses).isSubset(of: [201, 503]), "statuses during the outage: \(Set(statuses))")

            // Nothing of the refused registration was written: the same device registers as new (201, not
            // 409 for a device that exists), and the refresh token refused during the outage still works.
            let again = try await process.send("POST", "api/v1/auth/register-device", json: #"{"device_id":"\#(deviceID.uuidString)"}"#)
            #expect(again.status == 201, "\(String(decoding: again.body, as: UTF8.self))")
            #expect(try await process.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(before.refreshToken)"}"#).status == 200)
            #expect(await process.terminate() == 0, "log:\n\(process.log)")
            server = nil
        } catch {
            if let server { _ = await server.terminate() }
            await cluster.destroy()
            throw error
        }
        if let server { _ = await server.terminate() }
        await cluster.destroy()
    }
}
