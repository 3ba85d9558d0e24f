import Foundation
import LatchkeyAPI
import SQLKit

/// Everything stored about one user, for the export (`GET /api/v1/users/me/export`): no token, secret or hash of one
/// is read.
package struct AccountExportRecord: Sendable {
    package var user: AccountExport.User
    package var identities: [AccountExport.Identity]
    package var devices: [AccountExport.Device]
    package var sessions: [AccountExport.Session]
    /// The user's own budget limit; nil: the default.
    package var budgetLimit: Double?
    package var usage: [AccountExport.Usage]
    package var auditEvents: [AccountExport.AuditEvent]
}

/// Reads what the export holds.
package protocol AccountExportStore: Sendable {
    /// The user's data, read in one snapshot; nil when there is no such user.
    func exportRecord(ofUser userID: String) async throws -> AccountExportRecord?
}

extension SQLLatchkeyStore: AccountExportStore {
    package func exportRecord(ofUser userID: String) async throws -> AccountExportRecord? {
        try await self.database.read { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT u.id, u.kind, u.created_at, u.disabled_at, u.app_metadata, e.email, e.verified_at,
                        (SELECT b.budget_limit FROM budgets b WHERE b.user_id = u.id) AS budget_limit
                    FROM users u LEFT JOIN email_accounts e ON e.user_id = u.id WHERE u.id = \(bind: userID)
                    """
                ).first()
            else { return nil }
            let email = try row.optionalString("email")
            let verified = try row.optionalDate("verified_at") != nil
            let user = AccountExport.User(
                id: try row.string("id"), kind: UserKind(rawValue: try row.string("kind")), createdAt: try row.date("created_at"),
                email: email, emailVerified: email == nil ? nil : verified,
                disabledAt: try row.optionalDate("disabled_at"), appMetadata: try row.optionalString("app_metadata"),
                passkeys: try await Self.exportedPasskeys(of: userID, on: sql), secondFactors: try await Self.exportedFactors(of: userID, on: sql))
            return AccountExportRecord(
                user: user, identities: try await Self.exportedIdentities(of: userID, on: sql),
                devices: try await Self.exportedDevices(of: userID, on: sql),
                sessions: try await Self.exportedSessions(of: userID, on: sql), budgetLimit: try row.decode(column: "budget_limit", as: Double?.self),
                usage: try await Self.exportedUsage(of: userID, on: sql), auditEvents: try await Self.exportedAuditEvents(of: userID, on: sql))
        }
    }

    private static func exportedIdentities(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.Identity] {
        try await sql.raw("SELECT provider, subject, email, created_at FROM identities WHERE user_id = \(bind: userID)").all().map { row in
            AccountExport.Identity(
                provider: try row.string("provider"), subject: try row.string("subject"), email: try row.optionalString("email"),
                createdAt: try row.date("created_at"))
        }.sorted { ($0.createdAt, $0.provider, $0.subject) < ($1.createdAt, $1.provider, $1.subject) }
    }

    private static func exportedDevices(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.Device] {
        try await sql.raw("SELECT id, created_at, last_seen_at, key_thumbprint FROM devices WHERE user_id = \(bind: userID)").all().map { row in
            AccountExport.Device(
                id: try row.string("id"), createdAt: try row.date("created_at"), lastSeenAt: try row.optionalDate("last_seen_at"),
                keyBound: try row.optionalString("key_thumbprint") != nil)
        }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    private static func exportedSessions(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.Session] {
        try await sql.raw(
            "SELECT \(unsafeRaw: Self.sessionColumns), s.method, s.last_used_at, s.revoked_reason FROM sessions s WHERE s.user_id = \(bind: userID)"
        ).all().map { row in
            let session = try Self.session(from: row)
            return AccountExport.Session(
                id: session.id, deviceID: session.deviceID,
                method: try row.optionalString("method") ?? SessionMethod.of(amr: SessionService.amr(of: session)), createdAt: session.createdAt,
                lastUsedAt: try row.optionalDate("last_used_at"), endedAt: session.revokedAt,
                endReason: try row.optionalString("revoked_reason").map { SessionRevocationReason(stored: $0).rawValue })
        }.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    private static func exportedUsage(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.Usage] {
        try await sql.raw("SELECT amount, at, idempotency_key FROM usage_records WHERE user_id = \(bind: userID)").all().map { row in
            AccountExport.Usage(
                amount: try row.decode(column: "amount", as: Double.self), at: try row.date("at"), idempotencyKey: try row.string("idempotency_key"))
        }.sorted { ($0.at, $0.idempotencyKey) > ($1.at, $1.idempotencyKey) }
    }

    /// Events whose target is the user, or one of its sessions or devices (`user <id>`, `session <id>`, `device <id>`).
    private static func exportedAuditEvents(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.AuditEvent] {
        try await sql.raw(
            """
            SELECT id, at, actor, action, target, source, details FROM audit_events
            WHERE target = \(bind: "user " + userID)
                OR target IN (SELECT 'session ' || id FROM sessions WHERE user_id = \(bind: userID))
                OR target IN (SELECT 'device ' || id FROM devices WHERE user_id = \(bind: userID))
            """
        ).all().map { row in
            let id = try row.decode(column: "id", as: Int.self)
            let event = AccountExport.AuditEvent(
                at: try row.date("at"), actor: try row.string("actor"), action: try row.string("action"), target: try row.string("target"),
                source: try row.string("source"), details: try row.optionalString("details"))
            return (id, event)
        }.sorted { $0.0 > $1.0 }.map(\.1)
    }

    private static func exportedPasskeys(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.Passkey] {
        try await sql.raw("SELECT id, name, created_at, last_used_at FROM passkeys WHERE user_id = \(bind: userID)").all().map { row in
            AccountExport.Passkey(
                id: try row.string("id"), name: try row.string("name"), createdAt: try row.date("created_at"),
                lastUsedAt: try row.optionalDate("last_used_at"))
        }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    private static func exportedFactors(of userID: String, on sql: any SQLDatabase) async throws -> [AccountExport.SecondFactor] {
        try await sql.raw("SELECT id, type, created_at, confirmed_at FROM mfa_factors WHERE user_id = \(bind: userID)").all().map { row in
            AccountExport.SecondFactor(
                id: try row.string("id"), type: FactorType(rawValue: try row.string("type")), createdAt: try row.date("created_at"),
                confirmedAt: try row.optionalDate("confirmed_at"))
        }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }
}
