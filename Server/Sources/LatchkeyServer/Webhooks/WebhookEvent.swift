import Foundation
import SQLKit
import Synchronization

/// The `type` of a webhook event (Standard Webhooks' `{"type", "timestamp", "data"}`).
package enum WebhookEventType: String, CaseIterable, Sendable, Codable {
    /// A user was created (a new device, a new federated subject, an email sign-up…). `data`: `user_id`, `kind`.
    case userCreated = "user.created"
    /// One committed change of the user: `data.change` is `email_verified`, `email_set`, `password_set`, `enabled` or
    /// `app_metadata`.
    case userUpdated = "user.updated"
    /// The user was deleted (by themselves, support or the backend).
    case userDeleted = "user.deleted"
    /// The user was disabled (every session ended; sign-in and refresh answer 403 `user_disabled`).
    case userDisabled = "user.disabled"
    /// An identity was linked: `data.provider`.
    case identityLinked = "identity.linked"
    /// An identity was unlinked: `data.provider`.
    case identityUnlinked = "identity.unlinked"
    /// A session began (not a refresh): `data.session_id`, `data.device_id` when it has one.
    case sessionCreated = "session.created"
    /// A session ended: `data.session_id`, `data.reason` (the event socket's reasons: `logout`, `logout_global`,
    /// `reuse_detected`, `deleted`, `admin`, `disabled`).
    case sessionRevoked = "session.revoked"
    /// A passkey was added: `data.passkey_id`.
    case passkeyAdded = "passkey.added"
    /// A passkey was removed: `data.passkey_id`.
    case passkeyRemoved = "passkey.removed"
    /// A second factor was confirmed: `data.factor_id`, `data.factor_type`.
    case mfaEnabled = "mfa.enabled"
    /// A second factor was removed (by the user or support): `data.factor_id` when one, `data.factor_type`.
    case mfaDisabled = "mfa.disabled"
    /// The user's budget for the period is used up.
    case budgetExhausted = "budget.exhausted"
    /// `latchkey webhooks send-test <endpoint>`: for that endpoint only, whatever its `events`.
    case webhookTest = "webhook.test"
}

/// One event of the webhook outbox as stored: its ID is the `webhook-id` of every attempt to every endpoint.
package struct WebhookEvent: Sendable, Equatable {
    package var id: String
    package var type: WebhookEventType
    package var userID: String?
    /// IDs and kinds only: never a token, secret, password or code.
    package var data: [String: String]
    package var createdAt: Date
    /// Set for an event meant for one endpoint only (`webhook.test`).
    package var endpoint: String?

    package init(id: String, type: WebhookEventType, userID: String?, data: [String: String], createdAt: Date, endpoint: String? = nil) {
        self.id = id
        self.type = type
        self.userID = userID
        self.data = data
        self.createdAt = createdAt
        self.endpoint = endpoint
    }

    /// A new event ID: `evt_`, the time in milliseconds and this process's count (so IDs sort in the order events were
    /// written, which the deliverer keeps per endpoint), then random hex.
    static func newID(at time: Date) -> String {
        let count = Self.counter.add(1, ordering: .relaxed).newValue
        let random = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        return "evt_" + String(format: "%012llx%08x", UInt64(max(0, time.timeIntervalSince1970 * 1000)), UInt32(truncatingIfNeeded: count)) + random
    }

    private static let counter = Atomic<UInt64>(0)

    /// The body every endpoint receives: `{"type", "timestamp" (RFC 3339, UTC), "data"}`, `data` with `user_id` when
    /// the event is about a user; keys sorted, so the bytes are the same on every attempt.
    package func body() -> Data {
        struct Body: Encodable {
            var type: String
            var timestamp: String
            var data: [String: String]
        }
        var data = self.data
        if let userID = self.userID { data["user_id"] = userID }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(Body(type: self.type.rawValue, timestamp: formatter.string(from: self.createdAt), data: data))) ?? Data()
    }
}

extension SQLLatchkeyStore {
    /// Writes a webhook event into the outbox **inside the transaction of the change it tells** (`sql` is that
    /// transaction): it commits with the change or not at all. The deliverer fans it out to the endpoints later.
    ///
    /// `data` holds IDs and kinds only (`user_id` is added from `userID`); never a token, secret, password or code.
    @discardableResult
    static func emit(
        _ type: WebhookEventType, userID: String?, _ data: [String: String] = [:], endpoint: String? = nil, at time: Date,
        on sql: any SQLDatabase
    ) async throws -> String {
        let id = WebhookEvent.newID(at: time)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(data), as: UTF8.self)
        try await sql.raw(
            """
            INSERT INTO webhook_events (id, type, user_id, data, created_at, endpoint, fanned_out)
            VALUES (\(bind: id), \(bind: type.rawValue), \(bind: userID), \(bind: text), \(bind: time.stored), \(bind: endpoint), 0)
            """
        ).run()
        return id
    }

    /// An event row as stored.
    static func webhookEvent(from row: any SQLRow) throws -> WebhookEvent {
        let text = try row.string("data")
        let data = (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
        return WebhookEvent(
            id: try row.string("id"), type: WebhookEventType(rawValue: try row.string("type")) ?? .webhookTest,
            userID: try row.optionalString("user_id"), data: data, createdAt: try row.date("created_at"),
            endpoint: try row.optionalString("endpoint"))
    }
}
