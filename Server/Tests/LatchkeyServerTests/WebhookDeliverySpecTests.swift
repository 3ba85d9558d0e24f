import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// Issue 35, delivery: from the outbox written with the change, to each endpoint, retried on the server's clock per
/// `webhooks.retry-schedule` (the first attempt immediate), a 2xx ends it, a 410 disables the endpoint until
/// `latchkey webhooks enable`, a used-up schedule fails it; `webhook-id` stable, `webhook-timestamp` and the signature
/// made afresh per attempt.
@Suite(.timeLimit(.minutes(1)))
struct WebhookDeliverySpecTests {
    /// Waits (real time, briefly) to see that no further request came.
    static func expectNothingMore(than count: Int, _ receiver: WebhookPeer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.deliveries.count == count, "\(receiver.deliveries.map(\.text))", sourceLocation: sourceLocation)
    }

    /// Moves the server's clock `seconds` once the attempt under way is recorded (its delivery row has `attempts`), so
    /// the deliverer's next poll sees the new time.
    static func advance(_ server: TestServer, by seconds: TimeInterval, after attempts: Int) async throws {
        try await MultiProcessTests.eventually(within: .seconds(10), "attempt \(attempts) recorded") {
            try await server.webhookDeliveries().first.map { $0.attempts == attempts && $0.lastStatus != nil } ?? false
        }
        try await Task.sleep(for: .milliseconds(100))
        server.clock.advance(by: seconds)
    }

    /// The first attempt goes at the first poll (no wait of the schedule before it); a 500 and a 503 are retried after
    /// the schedule's waits, measured on the server's clock; a 200 ends it. Every attempt carries the event's
    /// `webhook-id` and body, its own `webhook-timestamp`, and a signature made afresh.
    @Test func a500IsRetriedPerTheScheduleWithTheSameIDAndAFreshTimestampAndSignatureUntilA2xx() async throws {
        let receiver = WebhookPeer()
        receiver.answer([.status(500), .status(503)], otherwise: .status(200))
        try await withWebhookServer(receiver: receiver, events: ["user.created"], drive: false, configure: { $0.webhooks.retrySchedule = [5, 60] }) {
            client, server, receiver in
            let start = Int(server.clock.now().timeIntervalSince1970)
            let device = try await client.registerDevice()
            server.clock.advance(by: 1)
            try await receiver.waitFor(count: 1)
            try await Self.advance(server, by: 4, after: 1)
            try await Self.expectNothingMore(than: 1, receiver)
            server.clock.advance(by: 1)
            try await receiver.waitFor(count: 2)
            try await Self.advance(server, by: 59, after: 2)
            try await Self.expectNothingMore(than: 2, receiver)
            server.clock.advance(by: 1)
            let attempts = try await receiver.waitFor(count: 3)
            try await server.webhooksSettled(drive: false)

            #expect(Set(attempts.map(\.id)).count == 1 && attempts[0].id.isEmpty == false, "\(attempts.map(\.id))")
            #expect(attempts.map(\.timestamp) == [start + 1, start + 6, start + 66].map(String.init), "\(attempts.map(\.timestamp))")
            #expect(Set(attempts.map(\.signature)).count == 3, "each attempt is signed afresh")
            #expect(attempts.allSatisfy { $0.verified })
            #expect(attempts.allSatisfy { $0.body == attempts[0].body }, "the body is the event's, the same on every attempt")
            #expect(attempts.allSatisfy { $0.data["user_id"] as? String == device.userID })
            let rows = try await server.webhookDeliveries()
            #expect(rows.count == 1 && rows.first?.status == "delivered" && rows.first?.attempts == 3, "\(rows)")
            server.clock.advance(by: 86_400)
            try await Self.expectNothingMore(than: 3, receiver)
        }
    }

    @Test func aScheduleUsedUpFailsTheDelivery() async throws {
        let receiver = WebhookPeer()
        receiver.answerAlways(.status(500))
        try await withWebhookServer(receiver: receiver, events: ["user.created"], drive: false, configure: { $0.webhooks.retrySchedule = [2, 3] }) {
            client, server, receiver in
            _ = try await client.registerDevice()
            server.clock.advance(by: 1)
            try await receiver.waitFor(count: 1)
            try await Self.advance(server, by: 2, after: 1)
            try await receiver.waitFor(count: 2)
            try await Self.advance(server, by: 3, after: 2)
            try await receiver.waitFor(count: 3)
            try await server.webhooksSettled(drive: false)
            let rows = try await server.webhookDeliveries()
            #expect(rows.count == 1 && rows.first?.status == "failed" && rows.first?.attempts == 3 && rows.first?.lastStatus == 500, "\(rows)")
            server.clock.advance(by: 86_400)
            try await Self.expectNothingMore(than: 3, receiver)
        }
    }

    /// A 410 disables the endpoint: nothing more goes to it, across a restart, until `latchkey webhooks enable <name>`.
    @Test func a410DisablesTheEndpointAcrossARestartUntilEnabled() async throws {
        let receiver = WebhookPeer()
        receiver.answer([.status(410)], otherwise: .status(200))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await TestBackend.general.freshDatabase(in: directory)
        try await receiver.listening { url in
            let configure: @Sendable (inout LatchkeyConfiguration) -> Void = {
                $0.addWebhookEndpoint(url: url + "/webhook", secret: receiver.secret, events: ["user.created"])
                $0.webhooks.retrySchedule = [1]
            }
            let first = try await TestServer.make(database: database, configure: configure)
            receiver.drive(first.clock)
            try await first.test(.live) { client in
                _ = try await client.registerDevice()
                try await receiver.waitFor(count: 1)
                try await first.webhooksSettled()
                #expect(try await first.webhookDeliveries().map(\.lastStatus) == [410])
                _ = try await client.registerDevice()
                try await first.webhooksSettled()
                first.clock.advance(by: 3600)
                try await Self.expectNothingMore(than: 1, receiver)
            }
            let second = try await TestServer.make(database: database, configure: configure)
            receiver.drive(second.clock)
            try await second.test(.live) { client in
                _ = try await client.registerDevice()
                try await second.webhooksSettled()
                second.clock.advance(by: 3600)
                try await Self.expectNothingMore(than: 1, receiver)
                let enabled = try await second.cli("webhooks", "enable", "app")
                #expect(enabled.exitCode == 0, "\(enabled)")
                let back = try await client.registerDevice()
                try await receiver.waitFor("user.created", data: ["user_id": back.userID])
                #expect(receiver.deliveries.allSatisfy { $0.verified })
            }
        }
    }

    /// `events`: `["*"]` takes every event, a list only those types.
    @Test func eachEndpointGetsOnlyTheEventsItAskedFor() async throws {
        let narrow = WebhookPeer()
        try await narrow.listening { narrowURL in
            try await withWebhookServer(
                configure: {
                    $0.addWebhookEndpoint(name: "sessions", url: narrowURL + "/webhook", secret: narrow.secret, events: ["session.created"])
                }
            ) { client, server, all in
                narrow.drive(server.clock)
                let device = try await client.registerDevice()
                #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken).status == .ok)
                try await all.waitFor("session.revoked", data: ["session_id": device.sessionID])
                try await narrow.waitFor("session.created", data: ["session_id": device.sessionID])
                try await server.webhooksSettled()
                #expect(Set(all.deliveries.compactMap(\.type)) == ["user.created", "session.created", "session.revoked"])
                #expect(narrow.deliveries.compactMap(\.type) == ["session.created"])
                #expect(narrow.deliveries.allSatisfy { $0.verified } && all.deliveries.allSatisfy { $0.verified })
                // The same event, the same webhook-id at each endpoint.
                let created = try #require(all.deliveries(ofType: "session.created").first)
                #expect(narrow.deliveries.first?.id == created.id)
            }
        }
    }

    /// `latchkey webhooks send-test <endpoint>` queues a `webhook.test` for that endpoint only, whatever its `events`.
    @Test func sendTestReachesOnlyThatEndpoint() async throws {
        let narrow = WebhookPeer()
        try await narrow.listening { narrowURL in
            try await withWebhookServer(
                configure: { $0.addWebhookEndpoint(name: "deletions", url: narrowURL + "/webhook", secret: narrow.secret, events: ["user.deleted"]) }
            ) { _, server, all in
                narrow.drive(server.clock)
                let endpoints: [[String: Any]] = [
                    ["name": "app", "url": all.baseURL + "/webhook", "secret": all.secret, "events": ["*"]],
                    ["name": "deletions", "url": narrowURL + "/webhook", "secret": narrow.secret, "events": ["user.deleted"]],
                ]
                let run = try await server.cli(["webhooks", "send-test", "deletions"], endpoints: endpoints)
                #expect(run.exitCode == 0, "\(run)")
                let test = try await narrow.waitFor("webhook.test")
                #expect(test.verified)
                try await server.webhooksSettled()
                #expect(all.deliveries.isEmpty, "\(all.deliveries.map(\.text))")
                #expect(narrow.deliveries.count == 1)
            }
        }
    }

    /// The receiver is down (connection refused), then comes back on its port: every event arrives, none twice.
    @Test func eventsWaitForAReceiverThatIsDownAndArriveOnceWhenItReturns() async throws {
        let port = try await unusedPort()
        let receiver = WebhookPeer()
        let server = try await TestServer.make {
            $0.addWebhookEndpoint(url: "http://127.0.0.1:\(port)/webhook", secret: receiver.secret)
            $0.webhooks.retrySchedule = [5, 5, 5, 5, 5, 5, 5, 5]
            // A refused connection takes the whole timeout of its attempt (the HTTP client keeps trying to connect until
            // then), and one endpoint's attempts go one after another: a short timeout keeps this test fast.
            $0.webhooks.timeout = 0.25
        }
        try await server.test(.live) { client in
            var users: [String] = []
            for _ in 0..<3 { users.append(try await client.registerDevice().userID) }
            server.clock.advance(by: 1)
            try await MultiProcessTests.eventually(within: .seconds(10), "every first attempt refused") {
                let rows = try await server.webhookDeliveries()
                return rows.count == 6 && rows.allSatisfy { $0.attempts >= 1 && $0.status == "pending" && $0.lastError != nil }
            }
            #expect(try await server.webhookDeliveries().allSatisfy { $0.lastStatus == nil }, "no answer came")
            try await receiver.listening(port: port) { _ in
                receiver.drive(server.clock)
                try await receiver.waitFor(count: 6)
                try await server.webhooksSettled()
                server.clock.advance(by: 3600)
                try await Self.expectNothingMore(than: 6, receiver)
            }
            let ids = receiver.deliveries.map(\.id)
            #expect(Set(ids).count == 6, "none twice: \(ids)")
            #expect(Set(receiver.deliveries(ofType: "user.created").compactMap { $0.data["user_id"] as? String }) == Set(users))
            #expect(receiver.deliveries.allSatisfy { $0.verified })
        }
    }
}

/// The same transaction: a change that rolls back tells nothing, and a change whose event cannot be written does not
/// happen.
@Suite(.timeLimit(.minutes(1)))
struct WebhookOutboxAtomicityTests {
    /// Makes every insert into `table` fail (only the rows for which the SQL condition `when` holds, `NEW` the row), or
    /// stops that.
    static func failInserts(into table: String, when condition: String? = nil, _ fail: Bool, on server: TestServer) async throws {
        let statements: [String] =
            switch (server.services.database.dialect, fail) {
            case (.sqlite, true):
                [
                    "CREATE TRIGGER injected_fault BEFORE INSERT ON \(table) \(condition.map { "WHEN \($0) " } ?? "")"
                        + "BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
                ]
            case (.sqlite, false): ["DROP TRIGGER injected_fault"]
            case (.postgresql, true):
                [
                    "CREATE FUNCTION injected_fault() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$ LANGUAGE plpgsql",
                    "CREATE TRIGGER injected_fault BEFORE INSERT ON \(table) FOR EACH ROW \(condition.map { "WHEN (\($0)) " } ?? "")"
                        + "EXECUTE FUNCTION injected_fault()",
                ]
            case (.postgresql, false): ["DROP TRIGGER injected_fault ON \(table)", "DROP FUNCTION injected_fault()"]
            }
        try await server.services.database.transaction { sql in
            for statement in statements { try await sql.raw(SQLQueryString(statement)).run() }
        }
    }

    @Test func aRegistrationThatRollsBackTellsNothing() async throws {
        try await withWebhookServer { client, server, receiver in
            try await Self.failInserts(into: "sessions", true, on: server)
            let failed = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            #expect(failed.status.code >= 400, "\(failed.text)")
            try await Self.failInserts(into: "sessions", false, on: server)
            #expect(try await server.webhookEventTypes().isEmpty)

            let device = try await client.registerDevice()
            try await receiver.waitFor("session.created", data: ["session_id": device.sessionID])
            try await server.webhooksSettled()
            #expect(receiver.deliveries.compactMap(\.type).sorted() == ["session.created", "user.created"], "\(receiver.deliveries.map(\.text))")
        }
    }

    /// Each event of a registration in turn cannot be written: the registration does not happen at all.
    @Test(arguments: ["user.created", "session.created"])
    func aChangeWhoseEventCannotBeWrittenDoesNotHappen(type: String) async throws {
        try await withWebhookServer { client, server, _ in
            try await Self.failInserts(into: "webhook_events", when: "NEW.type = '\(type)'", true, on: server)
            let deviceID = UUID().uuidString
            let failed = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID))
            #expect(failed.status.code >= 400, "\(failed.text)")
            try await Self.failInserts(into: "webhook_events", false, on: server)
            #expect(try await AtomicSignInTests.count("users", on: server) == 0)
            #expect(try await AtomicSignInTests.count("sessions", on: server) == 0)
            #expect(try await server.webhookEventTypes().isEmpty)
        }
    }
}

/// Two servers on one PostgreSQL database deliver each event to the endpoint once.
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason), .timeLimit(.minutes(1)))
struct WebhookMultiProcessTests {
    @Test func twoServersOnOneDatabaseDeliverEachEventOnce() async throws {
        let receiver = WebhookPeer()
        try await receiver.listening { url in
            let configure: @Sendable (inout LatchkeyConfiguration) -> Void = {
                $0.addWebhookEndpoint(url: url + "/webhook", secret: receiver.secret)
            }
            let clock = ManualClock()
            let a = try await TestServer.make(clock: clock, backend: .postgresql, configure: configure)
            let b = try await TestServer.make(clock: clock, database: a.databasePath, configure: configure)
            receiver.drive(clock)
            try await a.test(.live) { clientA in
                try await b.test(.live) { clientB in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<20 {
                            group.addTask { _ = try await (index.isMultiple(of: 2) ? clientA : clientB).registerDevice() }
                        }
                        try await group.waitForAll()
                    }
                    try await receiver.waitFor(count: 40, within: 20)
                    try await a.webhooksSettled()
                    try await Task.sleep(for: .milliseconds(300))
                    let ids = receiver.deliveries.map(\.id)
                    #expect(ids.count == 40 && Set(ids).count == 40, "each event once: \(ids.count) deliveries, \(Set(ids).count) events")
                }
            }
        }
    }
}
