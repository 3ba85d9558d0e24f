import Foundation
import SQLKit

/// A session about to be created, with the hash of its first refresh token.
@available(LatchkeyServer 1.0, *)
public struct NewSession: Sendable {
    public var id: String
    public var userID: String
    public var deviceID: String?
    public var createdAt: Date
    public var refreshTokenHash: String
    public var refreshTokenExpiresAt: Date
}

/// What presenting a refresh token did.
@available(LatchkeyServer 1.0, *)
public enum RefreshRotation: Sendable, Equatable {
    /// First use: the token is now spent and its successor stored.
    case rotated(SessionRecord)
    /// Spent within the grace window: the successor stored by the first use stands.
    case withinGrace(SessionRecord)
    /// Spent before the grace window: the session has just been revoked.
    case reuseDetected(SessionRecord)
    /// Unknown, expired, or belonging to a revoked session.
    case invalid
}

/// Sessions and their refresh-token families.
@available(LatchkeyServer 1.0, *)
public protocol SessionStore: Sendable {
    func createSession(_ session: NewSession) async throws
    func session(id: String) async throws -> SessionRecord?
    /// Spends the refresh token of session `sessionID` whose hash is `presentedHash`, atomically; a first use
    /// also marks the session's device as seen at `now`.
    func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval
    ) async throws -> RefreshRotation
    /// Whether the session's refresh token with this hash has been used; nil when there is no such token.
    func isRefreshTokenSpent(sessionID: String, hash: String) async throws -> Bool?
    /// Revokes the user's live sessions, all or all but `keeping`; returns the IDs it revoked.
    func revokeSessions(ofUser userID: String, keeping: String?, reason: String, at time: Date) async throws -> [String]
    /// Revokes one session; returns whether it was live.
    func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: SessionStore {
    public func createSession(_ session: NewSession) async throws {
        try await self.database.transaction { sql in try await Self.insert(session, on: sql) }
    }

    public func session(id: String) async throws -> SessionRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT id, user_id, device_id, created_at, revoked_at FROM sessions WHERE id = \(bind: id)")
                .first().map(Self.session(from:))
        }
    }

    public func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval
    ) async throws -> RefreshRotation {
        try await self.database.transaction { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT r.expires_at, r.used_at, s.id, s.user_id, s.device_id, s.created_at, s.revoked_at
                    FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                    WHERE r.session_id = \(bind: sessionID) AND r.token_hash = \(bind: presentedHash)
                    """
                ).first()
            else { return .invalid }
            let session = try Self.session(from: row)
            guard session.revokedAt == nil, try row.date("expires_at") > now else { return .invalid }
            // Claiming the token with a conditional update is what makes concurrent refreshes safe:
            // exactly one caller sees `used_at IS NULL`, on SQLite and on PostgreSQL alike.
            let claimed =
                try await sql.raw(
                    """
                    UPDATE refresh_tokens SET used_at = \(bind: now.stored)
                    WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: presentedHash) AND used_at IS NULL
                    RETURNING token_hash
                    """
                ).first() != nil
            if claimed {
                try await sql.raw(
                    """
                    INSERT INTO refresh_tokens (session_id, token_hash, created_at, expires_at)
                    VALUES (\(bind: session.id), \(bind: successorHash), \(bind: now.stored), \(bind: successorExpiresAt.stored))
                    """
                ).run()
                // A refresh is the app coming back: the device was last seen now.
                if let deviceID = session.deviceID {
                    try await sql.raw("UPDATE devices SET last_seen_at = \(bind: now.stored) WHERE id = \(bind: deviceID)").run()
                }
                return .rotated(session)
            }
            let usedAt =
                try await sql.raw(
                    "SELECT used_at FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: presentedHash)"
                ).first()?
                .optionalDate("used_at") ?? now
            if now.timeIntervalSince(usedAt) <= graceWindow {
                return .withinGrace(session)
            }
            try await sql.raw(
                """
                UPDATE sessions SET revoked_at = \(bind: now.stored), revoked_reason = 'refresh_token_reuse'
                WHERE id = \(bind: session.id) AND revoked_at IS NULL
                """
            ).run()
            try await Self.recordRevocation(scope: .session, values: [session.id], at: now, on: sql)
            return .reuseDetected(session)
        }
    }

    public func isRefreshTokenSpent(sessionID: String, hash: String) async throws -> Bool? {
        try await self.database.read { sql in
            try await sql.raw("SELECT used_at FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: hash)")
                .first().map { row in
                try row.optionalDate("used_at") != nil
            }
        }
    }

    public func revokeSessions(ofUser userID: String, keeping: String?, reason: String, at time: Date) async throws -> [String] {
        try await self.database.transaction { sql in
            let revoked = try await sql.raw(
                """
                UPDATE sessions SET revoked_at = \(bind: time.stored), revoked_reason = \(bind: reason)
                WHERE user_id = \(bind: userID) AND revoked_at IS NULL AND id <> \(bind: keeping ?? "") RETURNING id
                """
            ).all().map { try $0.string("id") }
            try await Self.recordRevocation(scope: .session, values: revoked, at: time, on: sql)
            return revoked
        }
    }

    public func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            let revoked =
                try await sql.raw(
                    """
                    UPDATE sessions SET revoked_at = \(bind: time.stored), revoked_reason = \(bind: reason)
                    WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id
                    """
                ).first() != nil
            if revoked { try await Self.recordRevocation(scope: .session, values: [id], at: time, on: sql) }
            return revoked
        }
    }

    static func insert(_ session: NewSession, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO sessions (id, user_id, device_id, created_at)
            VALUES (\(bind: session.id), \(bind: session.userID), \(bind: session.deviceID), \(bind: session.createdAt.stored))
            """
        ).run()
        try await sql.raw(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at)
            VALUES (\(bind: session.refreshTokenHash), \(bind: session.id), \(bind: session.createdAt.stored),
                    \(bind: session.refreshTokenExpiresAt.stored))
            """
        ).run()
    }

    static func session(from row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.string("id"), userID: try row.string("user_id"), deviceID: try row.optionalString("device_id"),
            createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"))
    }
}
