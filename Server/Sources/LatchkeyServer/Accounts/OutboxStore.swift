import Foundation
import SQLKit

/// A queued mail as the sender and `latchkey outbox list` see it.
package struct OutboxEntry: Sendable, Equatable {
    package let id: Int
    package let recipient: String
    /// `verify` or `reset`.
    package let purpose: String
    package let messageID: String
    /// The sealed message; nil once it was sent (or gave up), so no code outlives its delivery in the database.
    let sealedMessage: String?
    package let createdAt: Date
    package let nextAttemptAt: Date
    package let attempts: Int
    /// The last delivery failure, as the SMTP client described it (never a credential or the message).
    package let lastError: String?
    package let sentAt: Date?
    package let failedAt: Date?

    /// `sent`, `failed` or `pending`.
    package var state: String { self.sentAt != nil ? "sent" : self.failedAt != nil ? "failed" : "pending" }
}

/// The outbox: mails committed with what caused them, delivered and retried by ``OutboxSender``.
package protocol OutboxStore: Sendable {
    /// Claims up to `limit` mails due at `time` for `lease` seconds and counts an attempt for each: no other process
    /// takes them meanwhile.
    func claimDueMails(at time: Date, limit: Int, lease: TimeInterval) async throws -> [OutboxEntry]
    /// The mail was accepted by the relay: marks it sent and forgets its message.
    func markSent(id: Int, at time: Date) async throws
    /// The delivery failed: it is tried again at `retryAt`, or (nil) it gave up and stays failed.
    func markFailed(id: Int, error: String, retryAt: Date?, at time: Date) async throws
    /// The newest mails first; `pendingOnly` leaves out those sent.
    func outbox(limit: Int, pendingOnly: Bool) async throws -> [OutboxEntry]
    /// Support: makes failed (or, with `id`, that one pending or failed) mails due now with fresh attempts; returns how
    /// many. A mail already sent cannot be sent again (its message is gone).
    func retryMails(id: Int?, at time: Date) async throws -> Int
}

extension SQLLatchkeyStore: OutboxStore {
    static func enqueue(_ mail: NewOutboxMail, at time: Date, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO outbox (recipient, purpose, message_id, sealed_message, created_at, next_attempt_at, attempts)
            VALUES (\(bind: mail.recipient), \(bind: mail.purpose.rawValue), \(bind: mail.messageID), \(bind: mail.sealedMessage),
                    \(bind: time.stored), \(bind: time.stored), 0)
            """
        ).run()
    }

    package func claimDueMails(at time: Date, limit: Int, lease: TimeInterval) async throws -> [OutboxEntry] {
        let skipLocked: SQLQueryString = self.database.dialect == .postgresql ? " FOR UPDATE SKIP LOCKED" : ""
        return try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE outbox SET claimed_until = \(bind: time.addingTimeInterval(lease).stored), attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM outbox
                    WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= \(bind: time.stored)
                      AND (claimed_until IS NULL OR claimed_until <= \(bind: time.stored))
                    ORDER BY next_attempt_at, id LIMIT \(bind: limit)\(skipLocked))
                RETURNING *
                """
            ).all().map(Self.outboxEntry(from:))
        }
    }

    package func markSent(id: Int, at time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE outbox SET sent_at = \(bind: time.stored), sealed_message = NULL, claimed_until = NULL, last_error = NULL
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    package func markFailed(id: Int, error: String, retryAt: Date?, at time: Date) async throws {
        try await self.database.transaction { sql in
            if let retryAt {
                try await sql.raw(
                    """
                    UPDATE outbox SET last_error = \(bind: error), next_attempt_at = \(bind: retryAt.stored), claimed_until = NULL
                    WHERE id = \(bind: id)
                    """
                ).run()
            } else {
                try await sql.raw(
                    """
                    UPDATE outbox SET last_error = \(bind: error), failed_at = \(bind: time.stored), claimed_until = NULL
                    WHERE id = \(bind: id)
                    """
                ).run()
            }
        }
    }

    package func outbox(limit: Int, pendingOnly: Bool) async throws -> [OutboxEntry] {
        try await self.database.read { sql in
            let filter: SQLQueryString = pendingOnly ? "WHERE sent_at IS NULL" : ""
            return try await sql.raw("SELECT * FROM outbox \(filter) ORDER BY id DESC LIMIT \(bind: limit)").all().map(Self.outboxEntry(from:))
        }
    }

    package func retryMails(id: Int?, at time: Date) async throws -> Int {
        try await self.database.transaction { sql in
            let rows =
                if let id {
                    try await sql.raw(
                        """
                        UPDATE outbox SET failed_at = NULL, attempts = 0, next_attempt_at = \(bind: time.stored), claimed_until = NULL
                        WHERE id = \(bind: id) AND sent_at IS NULL AND sealed_message IS NOT NULL RETURNING id
                        """
                    ).all()
                } else {
                    try await sql.raw(
                        """
                        UPDATE outbox SET failed_at = NULL, attempts = 0, next_attempt_at = \(bind: time.stored), claimed_until = NULL
                        WHERE failed_at IS NOT NULL AND sent_at IS NULL AND sealed_message IS NOT NULL RETURNING id
                        """
                    ).all()
                }
            return rows.count
        }
    }

    static func outboxEntry(from row: any SQLRow) throws -> OutboxEntry {
        OutboxEntry(
            id: try row.decode(column: "id", as: Int.self), recipient: try row.string("recipient"), purpose: try row.string("purpose"),
            messageID: try row.string("message_id"), sealedMessage: try row.optionalString("sealed_message"), createdAt: try row.date("created_at"),
            nextAttemptAt: try row.date("next_attempt_at"), attempts: try row.decode(column: "attempts", as: Int.self),
            lastError: try row.optionalString("last_error"), sentAt: try row.optionalDate("sent_at"), failedAt: try row.optionalDate("failed_at"))
    }
}
