import Foundation
import HummingbirdTesting
import LatchkeyServer
import SQLKit
import Testing

extension LatchkeyConfiguration {
    /// One webhook endpoint named `name` posting to `url`, signed with `secret`, for `events` (`["*"]`: all).
    mutating func addWebhookEndpoint(name: String = "app", url: String, secret: String, events: [String] = ["*"]) {
        self.webhooks.endpoints.append(WebhookEndpoint(name: name, url: url, secret: secret, events: events))
    }
}

/// Runs `body` against a fresh live server whose one webhook endpoint, `app`, is `receiver` (every event unless
/// `events` says otherwise). With `drive`, the receiver's waits move the server's clock as they go (its deliverer polls
/// on that clock).
func withWebhookServer(
    receiver: WebhookPeer = WebhookPeer(), events: [String] = ["*"], clock: ManualClock = ManualClock(), drive: Bool = true,
    configure: @escaping @Sendable (inout LatchkeyConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol, TestServer, WebhookPeer) async throws -> Void
) async throws {
    try await receiver.listening { url in
        let server = try await TestServer.make(clock: clock) { configuration in
            configuration.addWebhookEndpoint(url: url + "/webhook", secret: receiver.secret, events: events)
            configure(&configuration)
        }
        receiver.drive(drive ? server.clock : nil)
        try await server.test(.live) { client in try await body(client, server, receiver) }
    }
}

/// One row of `webhook_deliveries`, as the tests read it.
struct WebhookDeliveryRow: Sendable, CustomStringConvertible {
    let eventID: String
    let endpoint: String
    let status: String
    let attempts: Int
    let lastStatus: Int?
    let lastError: String?
    var description: String {
        "\(self.eventID)→\(self.endpoint) \(self.status) attempts \(self.attempts) last \(self.lastStatus.map(String.init) ?? "-")"
    }
}

extension TestServer {
    /// Runs `latchkey <arguments>` on this server's database with a config file holding `endpoints` (`webhooks.endpoints`
    /// has no environment form, and the CLI reads it as `serve` does).
    func cli(_ arguments: [String], endpoints: [[String: Any]]) async throws -> CLIRun {
        let file = self.directory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["webhooks": ["endpoints": endpoints]]).write(to: file)
        return try await self.cli(arguments + ["--config", file.path])
    }

    /// Every row of `webhook_deliveries`.
    func webhookDeliveries() async throws -> [WebhookDeliveryRow] {
        try await self.services.database.read { sql in
            try await sql.raw("SELECT event_id, endpoint, status, attempts, last_status, last_error FROM webhook_deliveries ORDER BY created_at")
                .all().map {
                    row in
                    WebhookDeliveryRow(
                        eventID: try row.decode(column: "event_id", as: String.self), endpoint: try row.decode(column: "endpoint", as: String.self),
                        status: try row.decode(column: "status", as: String.self), attempts: try row.decode(column: "attempts", as: Int.self),
                        lastStatus: try row.decode(column: "last_status", as: Int?.self),
                        lastError: try row.decode(column: "last_error", as: String?.self))
                }
        }
    }

    /// The `type`s of every row of `webhook_events`, oldest first.
    func webhookEventTypes() async throws -> [String] {
        try await self.services.database.read { sql in
            try await sql.raw("SELECT type FROM webhook_events ORDER BY created_at").all().map { try $0.decode(column: "type", as: String.self) }
        }
    }

    /// Waits (in real time, up to 10 s; moving the clock a second every 50 ms with `drive`) until every event was fanned
    /// out and no delivery is pending: after that nothing more reaches an endpoint unless something new happens.
    func webhooksSettled(within seconds: Double = 10, drive: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let (unfanned, pending) = try await self.services.database.read { sql in
                let unfanned = try await sql.raw("SELECT COUNT(*) AS n FROM webhook_events WHERE fanned_out = 0").first()?.decode(
                    column: "n", as: Int.self)
                let pending = try await sql.raw("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").first()?.decode(
                    column: "n", as: Int.self)
                return (unfanned ?? -1, pending ?? -1)
            }
            if unfanned == 0 && pending == 0 { return }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("webhooks not settled: \(unfanned) events not fanned out, \(pending) deliveries pending")
            }
            try await Task.sleep(for: .milliseconds(50))
            if drive { self.clock.advance(by: 1) }
        }
    }
}
