import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import SQLKit
import Testing

@testable import LatchkeyServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several real `latchkey serve` processes on one PostgreSQL database behave as one server.
///
/// Waiting on other processes (a key reload, a revocation poll) is bounded polling for an event, never
/// a sleep for time to pass: the intervals are configured short and each wait fails well before the
/// 60-second verification-cache ceiling that a missing mechanism would fall back to.
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct MultiProcessTests {
    static let masterKey = TestServer.masterKey

    /// Two (or more) servers on one fresh schema; stopped (SIGTERM, exit 0 expected) by `body`'s end.
    static func withServers<T>(
        _ count: Int = 2, environment: [String: String] = [:], _ body: ([LatchkeyProcess], String) async throws -> T
    ) async throws -> T {
        let database = try await TestPostgres.freshDatabaseURL()
        var servers: [LatchkeyProcess] = []
        do {
            for _ in 0..<count {
                servers.append(try await LatchkeyProcess.start(database: database, environment: environment))
            }
            let result = try await body(servers, database)
            for server in servers { #expect(await server.terminate() == 0, "log:\n\(server.log)") }
            return result
        } catch {
            for server in servers { _ = await server.terminate() }
            throw error
        }
    }

    /// Polls `condition` every 50 ms until it holds; fails after `limit`.
    static func eventually(
        within limit: Duration, _ what: String, _ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(what) did not happen within \(limit)", sourceLocation: sourceLocation)
    }

    /// Event sockets held by one process hear what another process did within a second: a logout through the revocation
    /// feed's notification, usage through the user-change notification. The feed's poll interval is set to a minute, longer
    /// than a frame is waited for, so the logout can only arrive by NOTIFY.
    @Test func eventSocketsOnOneProcessHearLogoutsAndUsageOfAnotherWithinASecond() async throws {
        try await Self.withServers(environment: ["LATCHKEY_USAGE_SERVICE_KEY": "usage-key", "LATCHKEY_REVOCATIONS_POLL_INTERVAL": "60"]) {
            servers, _ in
            let (a, b) = (servers[0], servers[1])
            let pair = try await a.registerDevice()
            let socket = try await EventSocketClient.open(port: a.port, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")

            let usage = #"{"user_id":"\#(pair.userID)","amount":3,"idempotency_key":"k"}"#
            #expect(try await b.send("POST", "api/v1/usage", bearer: "usage-key", json: usage).status == 200)
            let changed = try await socket.next()
            #expect(changed.type == "budget.changed")
            #expect(changed.used == 3)

            #expect(try await b.send("POST", "api/v1/auth/logout", bearer: pair.accessToken, json: "{}").status == 200)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "logout")
            #expect(try await socket.closeCode() == 4001)
        }
    }

    /// The backend API on one process: the user's socket on another hears `claims.changed` (a notification sent in the
    /// transaction that set `app_metadata`) and, once the user is disabled, `session.revoked` `disabled`.
    @Test func socketsOnOneProcessHearClaimsChangedAndDisablingDoneOnAnother() async throws {
        let key = "backend-key-0123456789abcdef0123456789"
        try await Self.withServers(environment: ["LATCHKEY_BACKEND_SERVICE_KEY": key, "LATCHKEY_REVOCATIONS_POLL_INTERVAL": "60"]) {
            servers, _ in
            let (a, b) = (servers[0], servers[1])
            let pair = try await a.registerDevice()
            let socket = try await EventSocketClient.open(port: a.port, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            let path = "api/v1/backend/users/\(pair.userID)"
            #expect(try await b.send("PATCH", path, bearer: key, json: #"{"app_metadata":{"plan":"pro"}}"#).status == 200)
            #expect(try await socket.next().type == "claims.changed")
            #expect(try await b.send("POST", path + "/disable", bearer: key, json: "{}").status == 200)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "disabled")
        }
    }

    @Test func aTokenMintedByOneProcessVerifiesOnTheOtherAndItsRefreshTokenWorksThere() async throws {
        try await Self.withServers { servers, _ in
            let (a, b) = (servers[0], servers[1])
            let pair = try await a.registerDevice()
            let me = try await b.send("GET", "api/v1/auth/me", bearer: pair.accessToken)
            #expect(me.status == 200)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            #expect(try decoder.decode(UserProfile.self, from: me.body).userID == pair.userID)
            let refreshed = try await b.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(pair.refreshToken)"}"#)
            #expect(refreshed.status == 200)
            let next = try JSONDecoder().decode(TokenPairResponse.self, from: refreshed.body)
            #expect(try await a.send("GET", "api/v1/auth/me", bearer: next.accessToken).status == 200)
        }
    }

    @Test func keysRotatedWithTheCLIAreUsedAndAcceptedByRunningProcessesWithoutARestart() async throws {
        // The documented bound is keys.reload-interval (default 30 s); here 1 s.
        try await Self.withServers(environment: ["LATCHKEY_KEYS_RELOAD_INTERVAL": "1"]) { servers, database in
            let (a, b) = (servers[0], servers[1])
            let before = try await a.registerDevice()
            let rotate = try await LatchkeyCLI.run(
                ["keys", "rotate", "--now", "--database", database], masterKey: Self.masterKey, workingDirectory: a.directory)
            #expect(rotate.exitCode == 0, "\(rotate)")
            let kid = rotate.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try Forge.header(of: before.accessToken).kid != kid)
            var after: TokenPairResponse?
            try await Self.eventually(within: .seconds(15), "process A signing with the rotated key") {
                let pair = try await a.registerDevice()
                after = pair
                return try Forge.header(of: pair.accessToken).kid == kid
            }
            let fresh = try #require(after)
            // B verifies the new key's tokens (loading it on the unknown kid if its own reload has not come yet)…
            #expect(try await b.send("GET", "api/v1/auth/me", bearer: fresh.accessToken).status == 200)
            // …and still the old key's, which keeps verifying after retirement.
            #expect(try await b.send("GET", "api/v1/auth/me", bearer: before.accessToken).status == 200)
            try await Self.eventually(within: .seconds(15), "process B publishing the rotated key") {
                let jwks = try await b.send("GET", ".well-known/jwks.json")
                return String(decoding: jwks.body, as: UTF8.self).contains(kid)
            }
        }
    }

    @Test func aRefreshTokenRotatedOnAAndReplayedOnBRevokesTheSessionOnBoth() async throws {
        // No grace window: any replay is outside it.
        try await Self.withServers(environment: ["LATCHKEY_TOKENS_REFRESH_GRACE": "0", "LATCHKEY_REVOCATIONS_POLL_INTERVAL": "0.2"]) {
            servers, _ in
            let (a, b) = (servers[0], servers[1])
            let first = try await a.registerDevice()
            let rotated = try await a.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(first.refreshToken)"}"#)
            #expect(rotated.status == 200)
            let successor = try JSONDecoder().decode(TokenPairResponse.self, from: rotated.body)
            // The app goes on with the successor (so the first token's replay is a reuse, not a lost answer)…
            let used = try await a.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(successor.refreshToken)"}"#)
            #expect(used.status == 200)
            let second = try JSONDecoder().decode(TokenPairResponse.self, from: used.body)
            // …and A verified (and cached) the newest access token before the replay.
            #expect(try await a.send("GET", "api/v1/auth/me", bearer: second.accessToken).status == 200)

            let replay = try await b.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(first.refreshToken)"}"#)
            #expect(replay.status == 401)
            // The newest is dead on both: its refresh token at once (the database says so)…
            #expect(try await a.send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(second.refreshToken)"}"#).status == 401)
            // …its access token at once on B, and on A once A has read the revocation feed.
            #expect(try await b.send("GET", "api/v1/auth/me", bearer: second.accessToken).status == 401)
            try await Self.eventually(within: .seconds(5), "A refusing the revoked session's access token") {
                try await a.send("GET", "api/v1/auth/me", bearer: second.accessToken).status == 401
            }
        }
    }

    @Test func logoutOnAMakesBRefuseTheSessionsAccessTokenWithinThePollInterval() async throws {
        try await Self.withServers(environment: ["LATCHKEY_REVOCATIONS_POLL_INTERVAL": "0.2"]) { servers, _ in
            let (a, b) = (servers[0], servers[1])
            let pair = try await a.registerDevice()
            // B has verified the token, so it sits in B's verification cache (trusted up to 60 s).
            #expect(try await b.send("GET", "api/v1/auth/me", bearer: pair.accessToken).status == 200)
            #expect(try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 200)
            #expect(try await a.send("POST", "api/v1/auth/logout", bearer: pair.accessToken, json: "{}").status == 200)
            #expect(try await a.send("GET", "api/v1/auth/me", bearer: pair.accessToken).status == 401)
            try await Self.eventually(within: .seconds(5), "B refusing the logged-out session's access token") {
                try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 401
            }
            #expect(try await b.send("GET", "api/v1/auth/me", bearer: pair.accessToken).status == 401)
        }
    }

    /// With a poll interval of an hour, only PostgreSQL's notification can tell B in time.
    @Test func aLogoutOnAReachesBThroughANotificationWithoutWaitingForAPoll() async throws {
        try await Self.withServers(environment: ["LATCHKEY_REVOCATIONS_POLL_INTERVAL": "3600"]) { servers, _ in
            let (a, b) = (servers[0], servers[1])
            let pair = try await a.registerDevice()
            #expect(try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 200)
            #expect(try await a.send("POST", "api/v1/auth/logout", bearer: pair.accessToken, json: "{}").status == 200)
            try await Self.eventually(within: .seconds(5), "B refusing the logged-out session's access token") {
                try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 401
            }
        }
    }

    @Test func fiftyConcurrentRefreshesOfOneTokenOverBothProcessesYieldOneSuccessor() async throws {
        try await Self.withServers(environment: ["LATCHKEY_LIMITS_REFRESH_LIMIT": "0"]) { servers, _ in
            let pair = try await servers[0].registerDevice()
            let body = #"{"refresh_token":"\#(pair.refreshToken)"}"#
            let answers = try await withThrowingTaskGroup(of: HTTPAnswer.self) { group in
                for index in 0..<50 {
                    let server = servers[index % servers.count]
                    group.addTask { try await server.send("POST", "api/v1/auth/refresh", json: body) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.status) == Array(repeating: 200, count: 50))
            let successors = Set(try answers.map { try JSONDecoder().decode(TokenPairResponse.self, from: $0.body).refreshToken })
            #expect(successors.count == 1)
            // The one successor is live, once: its own rotation works.
            let successor = try #require(successors.first)
            let next = try await servers[1].send("POST", "api/v1/auth/refresh", json: #"{"refresh_token":"\#(successor)"}"#)
            #expect(next.status == 200)
        }
    }

    @Test func processesStartingTogetherOnAnEmptyDatabaseMigrateItOnce() async throws {
        let database = try await TestPostgres.freshDatabaseURL()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let runs = try await withThrowingTaskGroup(of: CLIRun.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await LatchkeyCLI.run(["migrate", "--database", database], masterKey: Self.masterKey, workingDirectory: directory)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for run in runs { #expect(run.exitCode == 0, "\(run)") }
        let opened = try PostgresLatchkeyDatabase(url: database, logger: TestServer.quietLogger)
        let (versions, activeKeys) = try await opened.whileRunning {
            try await opened.read { sql in
                let versions = try await sql.raw("SELECT version FROM latchkey_migrations ORDER BY version").all()
                    .map { try $0.decode(column: "version", as: Int.self) }
                let keys = try await sql.raw("SELECT COUNT(*) AS n FROM signing_keys WHERE retired_at IS NULL").first()?
                    .decode(column: "n", as: Int.self)
                return (versions, keys ?? 0)
            }
        }
        #expect(versions == Migrations.all.map(\.version))
        #expect(activeKeys == 1)
    }
}

/// What a server process answered.
struct HTTPAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    var envelope: ErrorEnvelope? { try? JSONDecoder().decode(ErrorEnvelope.self, from: self.body) }
}

/// A `latchkey serve` process started by a test, on a database it is given.
struct LatchkeyProcess: Sendable {
    let pid: pid_t
    let port: Int
    let directory: URL
    var baseURL: URL { URL(string: "http://127.0.0.1:\(self.port)")! }

    /// Starts `latchkey serve` on `database` with `masterKey` (default the test master key; nil: the key file beside an
    /// SQLite database) and abuse limits off unless `environment` says otherwise, and waits until it is ready.
    static func start(
        database: String, masterKey: String? = TestServer.masterKey, environment extra: [String: String] = [:]
    ) async throws -> LatchkeyProcess {
        let port = try ServeCommandTests.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let environment = [
            "LATCHKEY_MASTER_KEY": masterKey, "LATCHKEY_LIMITS_REGISTER_DEVICE_LIMIT": "0", "LATCHKEY_LIMITS_GUEST_LIMIT": "0",
            "LATCHKEY_LIMITS_REFRESH_LIMIT": "0", "LATCHKEY_LIMITS_REFRESH_FAILURES_LIMIT": "0", "LATCHKEY_LIMITS_ACCESS_CODE_EXCHANGE_LIMIT": "0",
            "LATCHKEY_LOG_LEVEL": "warning",
        ].compactMapValues { $0 }.merging(extra) { $1 }
        let pid = try ProcessRunner.spawn(
            try LatchkeyCLI.executable(),
            arguments: ["serve", "--port", String(port), "--database", database, "--public-url", TestServer.issuer],
            environment: LatchkeyCLI.environment(environment), workingDirectory: directory,
            stdout: directory.appendingPathComponent("stdout"), stderr: directory.appendingPathComponent("stderr"))
        let server = LatchkeyProcess(pid: pid, port: port, directory: directory)
        // Waiting for another process to start listening: poll, bounded to about 30 s.
        for _ in 0..<300 {
            if let answer = try? await server.send("GET", "api/v1/health/ready"), answer.status == 200 { return server }
            try await Task.sleep(for: .milliseconds(100))
        }
        _ = await server.terminate()
        throw TestFailure("latchkey serve did not answer on port \(port); log:\n\(server.log)")
    }

    func send(
        _ method: String, _ path: String, bearer: String? = nil, json: String? = nil, timeout: TimeInterval = 30
    ) async throws
        -> HTTPAnswer
    {
        var request = URLRequest(url: self.baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { headers[String(describing: name).lowercased()] = String(describing: value) }
        return HTTPAnswer(status: http?.statusCode ?? 0, headers: headers, body: data)
    }

    func registerDevice(_ deviceID: UUID = UUID()) async throws -> TokenPairResponse {
        let answer = try await self.send("POST", "api/v1/auth/register-device", json: #"{"device_id":"\#(deviceID.uuidString)"}"#)
        guard answer.status == 201 else {
            throw TestFailure("register-device answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return try JSONDecoder().decode(TokenPairResponse.self, from: answer.body)
    }

    /// SIGTERM, then the exit code.
    func terminate() async -> Int32 {
        kill(self.pid, SIGTERM)
        return await LatchkeyCLI.waitForExit(self.pid)
    }

    var log: String { (try? String(contentsOf: self.directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }
}
