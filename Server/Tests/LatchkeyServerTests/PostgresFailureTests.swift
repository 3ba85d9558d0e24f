import Foundation
import LatchkeyServer
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 29: PostgreSQL failures say what failed — at start, in the CLI and in `/api/v1/health/ready` — and a server
/// started while PostgreSQL is down keeps trying instead of exiting.
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct PostgresFailureTests {
    static let masterKey = Data(repeating: 6, count: 32).base64EncodedString()

    /// The test cluster's URL with `change` applied to its parts.
    static func url(_ change: (inout URLComponents) -> Void) throws -> String {
        let base = try #require(TestPostgres.url)
        var components = try #require(URLComponents(string: base))
        change(&components)
        return try #require(components.string)
    }

    static func usersList(database: String) async throws -> CLIRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await LatchkeyCLI.run(
            ["users", "list"], masterKey: Self.masterKey, workingDirectory: directory,
            environment: ["LATCHKEY_DATABASE": database, "LATCHKEY_DATABASE_TIMEOUT": "2"])
    }

    @Test func aStoppedServerIsConnectionRefused() async throws {
        let run = try await Self.usersList(database: try Self.url { $0.port = try? ServeCommandTests.freePort() })
        #expect(run.exitCode == 1, "\(run)")
        #expect(run.stderr.contains("connection refused (is PostgreSQL running?)"), "\(run)")
    }

    @Test func aMissingDatabaseIsNamed() async throws {
        let run = try await Self.usersList(database: try Self.url { $0.path = "/latchkey_no_such_db" })
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains(#"database "latchkey_no_such_db" does not exist"#), "\(run)")
    }

    @Test func tlsRequiredOfAServerWithoutTLSIsRefused() async throws {
        let run = try await Self.usersList(
            database: try Self.url { components in
                components.queryItems =
                    (components.queryItems ?? []).filter { $0.name != "sslmode" } + [URLQueryItem(name: "sslmode", value: "require")]
            })
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("TLS refused by the server"), "\(run)")
    }

    /// The README's `sslmode=require` works as written against a server with a self-signed certificate (as libpq:
    /// encrypted, certificate unchecked); `verify-full` checks it against `sslrootcert`, and without it says so.
    @Test func sslmodeRequireEncryptsAndVerifyFullChecksTheCertificate() async throws {
        let cluster = try await DatabaseFaultTests.Cluster.create(["--tls"])
        do {
            let base = "postgres://latchkey@127.0.0.1:\(cluster.port)/postgres"
            let require = try await Self.usersList(database: base + "?sslmode=require")
            #expect(require.exitCode == 0, "\(require)")
            let roots = cluster.directory + "/root.crt"
            let verified = try await Self.usersList(database: base + "?sslmode=verify-full&sslrootcert=" + roots)
            #expect(verified.exitCode == 0, "\(verified)")
            let unverified = try await Self.usersList(database: base + "?sslmode=verify-full")
            #expect(unverified.exitCode == 78, "\(unverified)")
            #expect(unverified.stderr.contains("the TLS handshake failed"), "\(unverified)")
        } catch {
            await cluster.destroy()
            throw error
        }
        await cluster.destroy()
    }

    @Test func aWrongPasswordIsAuthenticationFailedAndNeverShown() async throws {
        // scripts/pg-cluster makes latchkey_password authenticate with its password (scram-sha-256).
        let admin = try PostgresLatchkeyDatabase(
            url: try #require(TestPostgres.url), timeout: 10, maximumConnections: 1, logger: TestServer.quietLogger)
        try await admin.whileRunning {
            try await admin.transaction { sql in
                try await sql.raw(
                    """
                    DO $$ BEGIN
                      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'latchkey_password') THEN
                        CREATE ROLE latchkey_password LOGIN PASSWORD 'the-right-one';
                      END IF;
                    END $$
                    """
                ).run()
            }
        }
        let wrong = "wrong-password-never-shown"
        let run = try await Self.usersList(
            database: try Self.url { components in
                components.user = "latchkey_password"
                components.password = wrong
            })
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("authentication failed for user latchkey_password"), "\(run)")
        #expect(!run.stderr.contains(wrong) && !run.stdout.contains(wrong), "\(run)")
    }

    @Test func aServerStartedWhilePostgreSQLIsDownKeepsTryingAndBecomesReady() async throws {
        let base = try #require(TestPostgres.url)
        let target = try #require(URLComponents(string: base)?.port)
        let forwarded = try ServeCommandTests.freePort()
        let database = try await TestPostgres.freshDatabaseURL()
        var components = try #require(URLComponents(string: database))
        components.port = forwarded
        let port = try ServeCommandTests.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-pg-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // after the server is killed (defers run in reverse)
        let pid = try ProcessRunner.spawn(
            try LatchkeyCLI.executable(), arguments: ["serve", "--port", String(port)],
            environment: LatchkeyCLI.environment([
                "LATCHKEY_DATABASE": try #require(components.string), "LATCHKEY_MASTER_KEY": Self.masterKey, "LATCHKEY_DATABASE_TIMEOUT": "1",
            ]),
            workingDirectory: directory, stdout: directory.appendingPathComponent("stdout"), stderr: directory.appendingPathComponent("stderr"))
        defer { kill(pid, SIGKILL) }
        let server = "http://127.0.0.1:\(port)"
        func get(_ path: String) async -> (Int, String)? {
            guard let (data, response) = try? await URLSession.shared.data(from: URL(string: server + path)!) else { return nil }
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        // Nothing listens at the database's port: alive, not ready, and saying why (once the first attempt has failed).
        var notReady: (Int, String)?
        for _ in 0..<100 {
            if let answer = await get("/api/v1/health/ready"), answer.1.contains("connection refused") {
                notReady = answer
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(notReady?.0 == 503, "\(String(describing: notReady))")
        #expect(await get("/api/v1/health")?.0 == 200)
        #expect(await get("/.well-known/jwks.json")?.0 == 503)
        // PostgreSQL comes: the server becomes ready without a restart.
        try await TCPForwarder.forwarding(port: forwarded, to: target) {
            var ready = false
            for _ in 0..<300 where !ready {
                ready = await get("/api/v1/health/ready")?.0 == 200
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready)
            #expect(await get("/.well-known/jwks.json")?.0 == 200)
            kill(pid, SIGTERM)
            #expect(await LatchkeyCLI.waitForExit(pid) == 0)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        #expect(log.contains("database not ready; trying again"), "\(log)")
        #expect(!log.contains(Self.masterKey))
    }
}
