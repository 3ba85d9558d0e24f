import Foundation
import LatchkeyAPI
import SQLKit

/// A user as the backend API shows them.
package struct BackendUserRecord: Sendable, Equatable {
    package var user: UserRecord
    package var identities: [IdentityRecord]
    package var devices: [DeviceRecord]
    /// The stored `app_metadata`: a JSON object's compact text.
    package var appMetadata: String?
    package var disabledAt: Date?
}

/// What disabling did.
package enum DisableOutcome: Sendable, Equatable {
    /// Disabled now; these sessions were ended.
    case disabled(revokedSessions: [String])
    /// It was disabled already: nothing changed.
    case alreadyDisabled
    case unknownUser
}

/// What enabling did.
package enum EnableOutcome: Sendable, Equatable {
    case enabled
    /// It was not disabled: nothing changed.
    case notDisabled
    case unknownUser
}

extension SQLLatchkeyStore {
    /// The user with their identities and devices (oldest first), `app_metadata` and when they were disabled; one snapshot.
    package func backendUser(id: String) async throws -> BackendUserRecord? {
        try await self.database.read { sql in
            guard
                let row = try await sql.raw(
                    "SELECT id, kind, created_at, app_metadata, disabled_at FROM users WHERE id = \(bind: id)"
                ).first()
            else { return nil }
            return BackendUserRecord(
                user: try Self.user(from: row), identities: try await Self.identities(ofUser: id, on: sql),
                devices: try await Self.devices(ofUser: id, on: sql), appMetadata: try row.optionalString("app_metadata"),
                disabledAt: try row.optionalDate("disabled_at"))
        }
    }

    /// Stores the user's `app_metadata` (a JSON object's compact text; nil clears it) with its `user.updated` webhook, in one
    /// transaction; their event sockets then hear `claims.changed`. False for an unknown user.
    package func setAppMetadata(_ text: String?, ofUser userID: String, at time: Date) async throws -> Bool {
        try await self.changing { sql, changes in
            guard try await sql.raw("UPDATE users SET app_metadata = \(bind: text) WHERE id = \(bind: userID) RETURNING id").first() != nil else {
                return false
            }
            try await Self.emit(.userUpdated, userID: userID, ["change": "app_metadata"], at: time, on: sql)
            changes.note(.claimsChanged(userID))
            return true
        }
    }

    /// Tells the user's event sockets, in every process, `claims.changed`; false for an unknown user.
    package func announceClaimsChanged(ofUser userID: String) async throws -> Bool {
        try await self.changing { sql, changes in
            guard try await Self.exists(userID, on: sql) else { return false }
            changes.note(.claimsChanged(userID))
            return true
        }
    }

    /// Disables the user in one transaction: `disabled_at` set, every live session revoked (reason `disabled`: their
    /// sockets hear `session.revoked` `disabled`) and every access code, the webhooks `user.disabled` and one `session.revoked` per session.
    package func disableUser(id userID: String, at time: Date) async throws -> DisableOutcome {
        try await self.changing { sql, changes in
            // One conditional update decides, so two concurrent disables end the sessions (and tell the webhooks) once.
            guard
                try await sql.raw(
                    "UPDATE users SET disabled_at = \(bind: time.stored) WHERE id = \(bind: userID) AND disabled_at IS NULL RETURNING id"
                ).first() != nil
            else { return try await Self.exists(userID, on: sql) ? .alreadyDisabled : .unknownUser }
            changes.note(.userSignedOut(userID))
            // Each with its webhook `session.revoked` (reason `disabled`).
            let revoked = try await Self.revokeSessions(
                where: "user_id = \(bind: userID)", reason: "disabled", at: time, on: sql, noting: changes)
            // An access code is a bearer of the user too: it ends with the sessions (and stays ended once enabled).
            let codes = try await sql.raw(
                """
                UPDATE access_codes SET revoked_at = \(bind: time.stored)
                WHERE user_id = \(bind: userID) AND revoked_at IS NULL RETURNING id
                """
            ).all().map { try $0.string("id") }
            for code in codes { changes.note(.accessCodeRevoked(code)) }
            try await Self.emit(.userDisabled, userID: userID, at: time, on: sql)
            return .disabled(revokedSessions: revoked)
        }
    }

    /// Enables a disabled user, with the webhook `user.updated` (`enabled`), in one transaction; ended sessions stay ended.
    package func enableUser(id userID: String, at time: Date) async throws -> EnableOutcome {
        try await self.changing { sql, _ in
            guard
                try await sql.raw(
                    "UPDATE users SET disabled_at = NULL WHERE id = \(bind: userID) AND disabled_at IS NOT NULL RETURNING id"
                ).first() != nil
            else { return try await Self.exists(userID, on: sql) ? .notDisabled : .unknownUser }
            try await Self.emit(.userUpdated, userID: userID, ["change": "enabled"], at: time, on: sql)
            return .enabled
        }
    }

    private static func exists(_ userID: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil
    }

    /// When the user was disabled; nil when they are not (or do not exist).
    package func disabledAt(userID: String) async throws -> Date? {
        try await self.database.read { sql in
            try await sql.raw("SELECT disabled_at FROM users WHERE id = \(bind: userID)").first()?.optionalDate("disabled_at")
        }
    }
}
