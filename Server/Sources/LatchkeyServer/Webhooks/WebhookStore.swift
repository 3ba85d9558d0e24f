import Foundation
import SQLKit

/// One delivery of an event to an endpoint, as the deliverer and `latchkey webhooks deliveries` see it.
package struct WebhookDelivery: Sendable, Equatable {
    package enum Status: String, Sendable, CaseIterable {
        case pending, delivered, failed
    }

    package var eventID: String
    package var eventType: String
    package var endpoint: String
    package var status: Status
    /// Attempts made (a claimed delivery counts the attempt under way).
    package var attempts: Int
    package var createdAt: Date
    package var nextAttemptAt: Date
    package var lastAttemptAt: Date?
    /// The HTTP status of the last answer; nil when there was none (a network error, a timeout).
    package var lastStatus: Int?
    package var lastError: String?
    package var finishedAt: Date?
}

/// An endpoint that answered 410: no delivery to it is attempted until `latchkey webhooks enable <name>`.
package struct WebhookEndpointState: Sendable, Equatable {
    package var name: String
    package var disabledAt: Date
    package var reason: String
}

/// The webhook outbox: events written in their change's transaction (``SQLLatchkeyStore/emit(_:userID:_:endpoint:at:on:)``),
/// fanned out into one delivery per endpoint, delivered and retried by ``WebhookDeliverer``.
package protocol WebhookStore: Sendable {
    /// Turns up to `limit` events not yet fanned out into a pending delivery for each of `endpoints` that takes the event
    /// (an event for one endpoint — `webhook.test` — to that one only) and marks them fanned out; returns how many events.
    func fanOut(to endpoints: [WebhookEndpoint], at time: Date, limit: Int) async throws -> Int
    /// Claims up to `limit` pending deliveries due at `time` to `endpoints` (none to a disabled one) for `lease` seconds,
    /// counting an attempt for each: no other process takes them meanwhile.
    func claimDueDeliveries(endpoints: [String], at time: Date, limit: Int, lease: TimeInterval) async throws -> [(WebhookDelivery, WebhookEvent)]
    /// Records the answer of an attempt: `status` delivered or failed (finished), or pending again at `retryAt`.
    func recordAttempt(
        eventID: String, endpoint: String, status: WebhookDelivery.Status, answer: Int?, error: String?, retryAt: Date?, at time: Date
    ) async throws
    /// The endpoint answered 410: disabled until enabled again.
    func disableEndpoint(_ name: String, reason: String, at time: Date) async throws
    /// Enables `name` again and makes its pending deliveries due at `time`; whether it was disabled.
    func enableEndpoint(_ name: String, at time: Date) async throws -> Bool
    /// Every disabled endpoint.
    func disabledEndpoints() async throws -> [WebhookEndpointState]
    /// The newest deliveries first, optionally only those to `endpoint` or in `status`.
    func webhookDeliveries(endpoint: String?, status: WebhookDelivery.Status?, limit: Int) async throws -> [WebhookDelivery]
    /// Makes the event's pending and failed deliveries due at `time` with fresh attempts; how many. Nil: no such event.
    func retryWebhookEvent(_ id: String, at time: Date) async throws -> Int?
    /// Queues a `webhook.test` event for `endpoint` only; its ID.
    func queueTestEvent(endpoint: String, at time: Date) async throws -> String
}

extension SQLLatchkeyStore: WebhookStore {
    package func fanOut(to endpoints: [WebhookEndpoint], at time: Date, limit: Int) async throws -> Int {
        let skipLocked: SQLQueryString = self.database.dialect == .postgresql ? " FOR UPDATE SKIP LOCKED" : ""
        return try await self.database.transaction { sql in
            let events = try await sql.raw(
                "SELECT * FROM webhook_events WHERE fanned_out = 0 ORDER BY created_at, id LIMIT \(bind: limit)\(skipLocked)"
            ).all().map(Self.webhookEvent(from:))
            guard !events.isEmpty else { return 0 }
            let disabled = Set(
                try await sql.raw("SELECT name FROM webhook_endpoint_states WHERE disabled_at IS NOT NULL").all().map { try $0.string("name") })
            for event in events {
                let targets = endpoints.filter { endpoint in
                    !disabled.contains(endpoint.name) && (event.endpoint.map { $0 == endpoint.name } ?? endpoint.accepts(event.type))
                }
                for endpoint in targets {
                    try await sql.raw(
                        """
                        INSERT INTO webhook_deliveries (event_id, endpoint, status, attempts, created_at, next_attempt_at)
                        VALUES (\(bind: event.id), \(bind: endpoint.name), 'pending', 0, \(bind: time.stored), \(bind: time.stored))
                        ON CONFLICT DO NOTHING
                        """
                    ).run()
                }
            }
            try await sql.raw("UPDATE webhook_events SET fanned_out = 1 WHERE id IN (\(binds: events.map(\.id)))").run()
            return events.count
        }
    }

    package func claimDueDeliveries(
        endpoints: [String], at time: Date, limit: Int, lease: TimeInterval
    ) async throws -> [(WebhookDelivery, WebhookEvent)] {
        guard !endpoints.isEmpty else { return [] }
        let skipLocked: SQLQueryString = self.database.dialect == .postgresql ? " FOR UPDATE SKIP LOCKED" : ""
        return try await self.database.transaction { sql in
            let claimed = try await sql.raw(
                """
                UPDATE webhook_deliveries SET claimed_until = \(bind: time.addingTimeInterval(lease).stored), attempts = attempts + 1,
                    last_attempt_at = \(bind: time.stored)
                WHERE (event_id, endpoint) IN (
                    SELECT event_id, endpoint FROM webhook_deliveries
                    WHERE status = 'pending' AND next_attempt_at <= \(bind: time.stored)
                      AND (claimed_until IS NULL OR claimed_until <= \(bind: time.stored))
                      AND endpoint IN (\(binds: endpoints))
                      AND endpoint NOT IN (SELECT name FROM webhook_endpoint_states WHERE disabled_at IS NOT NULL)
                    ORDER BY next_attempt_at, event_id LIMIT \(bind: limit)\(skipLocked))
                RETURNING event_id, endpoint
                """
            ).all().map { (try $0.string("event_id"), try $0.string("endpoint")) }
            guard !claimed.isEmpty else { return [] }
            let rows = try await sql.raw(
                """
                SELECT d.*, e.id, e.type, e.user_id, e.data, e.created_at AS event_created_at, e.endpoint AS event_endpoint
                FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                WHERE d.event_id IN (\(binds: claimed.map(\.0)))
                """
            ).all()
            let wanted = Set(claimed.map { "\($0.0) \($0.1)" })
            return try rows.compactMap { row in
                let delivery = try Self.webhookDelivery(from: row)
                guard wanted.contains("\(delivery.eventID) \(delivery.endpoint)") else { return nil }
                let event = WebhookEvent(
                    id: delivery.eventID, type: WebhookEventType(rawValue: delivery.eventType) ?? .webhookTest,
                    userID: try row.optionalString("user_id"),
                    data: (try? JSONDecoder().decode([String: String].self, from: Data(try row.string("data").utf8))) ?? [:],
                    createdAt: try row.date("event_created_at"), endpoint: try row.optionalString("event_endpoint"))
                return (delivery, event)
            }
        }
    }

    package func recordAttempt(
        eventID: String, endpoint: String, status: WebhookDelivery.Status, answer: Int?, error: String?, retryAt: Date?, at time: Date
    ) async throws {
        let finishedAt: Double? = status == .pending ? nil : time.stored
        let next = (retryAt ?? time).stored
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE webhook_deliveries SET status = \(bind: status.rawValue), last_status = \(bind: answer), last_error = \(bind: error),
                    next_attempt_at = \(bind: next), finished_at = \(bind: finishedAt), claimed_until = NULL
                WHERE event_id = \(bind: eventID) AND endpoint = \(bind: endpoint)
                """
            ).run()
        }
    }

    package func disableEndpoint(_ name: String, reason: String, at time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO webhook_endpoint_states (name, disabled_at, disabled_reason) VALUES (\(bind: name), \(bind: time.stored), \(bind: reason))
                ON CONFLICT (name) DO UPDATE SET disabled_at = \(bind: time.stored), disabled_reason = \(bind: reason)
                """
            ).run()
        }
    }

    package func enableEndpoint(_ name: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            let rows = try await sql.raw(
                "DELETE FROM webhook_endpoint_states WHERE name = \(bind: name) AND disabled_at IS NOT NULL RETURNING name"
            ).all()
            try await sql.raw(
                """
                UPDATE webhook_deliveries SET next_attempt_at = \(bind: time.stored), claimed_until = NULL
                WHERE endpoint = \(bind: name) AND status = 'pending'
                """
            ).run()
            return !rows.isEmpty
        }
    }

    package func disabledEndpoints() async throws -> [WebhookEndpointState] {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM webhook_endpoint_states WHERE disabled_at IS NOT NULL ORDER BY name").all().map { row in
                WebhookEndpointState(
                    name: try row.string("name"), disabledAt: try row.date("disabled_at"), reason: try row.optionalString("disabled_reason") ?? "")
            }
        }
    }

    package func webhookDeliveries(endpoint: String?, status: WebhookDelivery.Status?, limit: Int) async throws -> [WebhookDelivery] {
        try await self.database.read { sql in
            var filter: SQLQueryString = "WHERE 1 = 1"
            if let endpoint { filter = filter + " AND d.endpoint = \(bind: endpoint)" }
            if let status { filter = filter + " AND d.status = \(bind: status.rawValue)" }
            return try await sql.raw(
                """
                SELECT d.*, e.type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id \(filter)
                ORDER BY d.created_at DESC, d.event_id DESC, d.endpoint LIMIT \(bind: limit)
                """
            ).all().map(Self.webhookDelivery(from:))
        }
    }

    package func retryWebhookEvent(_ id: String, at time: Date) async throws -> Int? {
        try await self.database.transaction { sql in
            guard try await sql.raw("SELECT id FROM webhook_events WHERE id = \(bind: id)").first() != nil else { return nil }
            return try await sql.raw(
                """
                UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = \(bind: time.stored), claimed_until = NULL,
                    finished_at = NULL
                WHERE event_id = \(bind: id) AND status IN ('pending', 'failed') RETURNING endpoint
                """
            ).all().count
        }
    }

    package func queueTestEvent(endpoint: String, at time: Date) async throws -> String {
        try await self.database.transaction { sql in
            try await Self.emit(.webhookTest, userID: nil, endpoint: endpoint, at: time, on: sql)
        }
    }

    static func webhookDelivery(from row: any SQLRow) throws -> WebhookDelivery {
        WebhookDelivery(
            eventID: try row.string("event_id"), eventType: try row.string("type"), endpoint: try row.string("endpoint"),
            status: WebhookDelivery.Status(rawValue: try row.string("status")) ?? .pending,
            attempts: try row.decode(column: "attempts", as: Int.self),
            createdAt: try row.date("created_at"), nextAttemptAt: try row.date("next_attempt_at"),
            lastAttemptAt: try row.optionalDate("last_attempt_at"),
            lastStatus: try row.decode(column: "last_status", as: Int?.self), lastError: try row.optionalString("last_error"),
            finishedAt: try row.optionalDate("finished_at"))
    }
}
