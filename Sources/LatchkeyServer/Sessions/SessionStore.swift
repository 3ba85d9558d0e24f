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
    /// The DPoP proof the sign-in came with: the session is bound to its key, and its `jti` is spent with the session.
    public var proof: VerifiedProof?
    /// The access code this session was exchanged from: revoking the code ends the session.
    public var accessCodeID: String?
}

/// What presenting a refresh token did.
@available(LatchkeyServer 1.0, *)
public enum RefreshRotation: Sendable, Equatable {
    /// First use: the token is now spent and its successor stored.
    case rotated(SessionRecord)
    /// Spent before, but its successor was never used: the answer to the first use was lost, the same successor stands.
    case unclaimedSuccessor(SessionRecord)
    /// Spent within the grace window, and its successor used since: the chain's newest token stands.
    case withinGrace(SessionRecord)
    /// Spent, its successor used, and the grace window over: the session has just been revoked.
    case reuseDetected(SessionRecord)
    /// The session is bound to a DPoP key and no proof with that key came (or this server requires proofs and the
    /// session has no key); nothing was spent.
    case proofRequired(SessionRecord)
    /// Unknown, expired, or belonging to a revoked session.
    case invalid
}

/// Sessions and their refresh-token families.
@available(LatchkeyServer 1.0, *)
public protocol SessionStore: Sendable {
    /// Creates the session (spending its proof's `jti`); ``StoreError/conflict`` when the user does not exist.
    func createSession(_ session: NewSession) async throws
    func session(id: String) async throws -> SessionRecord?
    /// Spends the refresh token of session `sessionID` whose hash is `presentedHash`, atomically; a first use
    /// also marks the session's device as seen at `now`. `successorHash` must be the hash of the presented token's
    /// successor (derived from it), so a lost answer can be given again.
    ///
    /// A session bound to a DPoP key needs `proof` made with that key; one that is not gets bound to `proof`'s key,
    /// or, when `requireProof`, is refused without one. The proof's `jti` is spent in the same transaction
    /// (``DPoPRejection/replayed`` when it was spent before).
    func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof?, requireProof: Bool
    ) async throws -> RefreshRotation
    /// Whether the session's refresh token with this hash has been used; nil when there is no such token.
    func isRefreshTokenSpent(sessionID: String, hash: String) async throws -> Bool?
    /// Revokes the user's live sessions, all or all but `keeping`; returns the IDs it revoked.
    func revokeSessions(ofUser userID: String, keeping: String?, reason: String, at time: Date) async throws -> [String]
    /// Revokes one session; returns whether it was live.
    func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool
}

@available(LatchkeyServer 1.0, *)
extension SessionStore {
    /// ``rotateRefreshToken(sessionID:presentedHash:successorHash:successorExpiresAt:now:graceWindow:proof:requireProof:)``
    /// without a proof.
    func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval
    ) async throws -> RefreshRotation {
        try await self.rotateRefreshToken(
            sessionID: sessionID, presentedHash: presentedHash, successorHash: successorHash, successorExpiresAt: successorExpiresAt, now: now,
            graceWindow: graceWindow, proof: nil, requireProof: false)
    }
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: SessionStore {
    public func createSession(_ session: NewSession) async throws {
        try await self.database.transaction { sql in try await Self.insert(session, on: sql) }
    }

    public func session(id: String) async throws -> SessionRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.sessionColumns) FROM sessions s WHERE s.id = \(bind: id)").first().map(Self.session(from:))
        }
    }

    public func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof?, requireProof: Bool
    ) async throws -> RefreshRotation {
        try await self.database.transaction { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT r.expires_at, r.used_at, \(unsafeRaw: Self.sessionColumns)
                    FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                    WHERE r.session_id = \(bind: sessionID) AND r.token_hash = \(bind: presentedHash)
                    """
                ).first()
            else { return .invalid }
            let session = try Self.session(from: row)
            guard session.revokedAt == nil, try row.date("expires_at") > now else { return .invalid }
            if let bound = session.dpopThumbprint {
                guard proof?.thumbprint == bound else { return .proofRequired(session) }
            } else if let proof {
                // A session started without a key (an older app) is bound to the key its app now proves.
                try await sql.raw("UPDATE sessions SET dpop_thumbprint = \(bind: proof.thumbprint) WHERE id = \(bind: session.id)").run()
            } else if requireProof {
                return .proofRequired(session)
            }
            try await Self.spend(proof, on: sql)
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
            // Spent before. A successor nobody used means the first answer never arrived: give it again.
            let successor = try await sql.raw(
                "SELECT used_at, expires_at FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: successorHash)"
            ).first()
            if let successor, try successor.optionalDate("used_at") == nil, try successor.date("expires_at") > now {
                return .unclaimedSuccessor(session)
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
            try await Self.revokeSessions(where: "user_id = \(bind: userID) AND id <> \(bind: keeping ?? "")", reason: reason, at: time, on: sql)
        }
    }

    public func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            try await !Self.revokeSessions(where: "id = \(bind: id)", reason: reason, at: time, on: sql).isEmpty
        }
    }

    /// Revokes the live sessions `condition` selects, inside the caller's transaction, and puts them in the feed.
    static func revokeSessions(where condition: SQLQueryString, reason: String, at time: Date, on sql: any SQLDatabase) async throws -> [String] {
        let revoked = try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: time.stored), revoked_reason = \(bind: reason)
            WHERE \(condition) AND revoked_at IS NULL RETURNING id
            """
        ).all().map { try $0.string("id") }
        try await Self.recordRevocation(scope: .session, values: revoked, at: time, on: sql)
        return revoked
    }

    static func insert(_ session: NewSession, on sql: any SQLDatabase) async throws {
        try await Self.spend(session.proof, on: sql)
        try await sql.raw(
            """
            INSERT INTO sessions (id, user_id, device_id, created_at, dpop_thumbprint, access_code_id)
            VALUES (\(bind: session.id), \(bind: session.userID), \(bind: session.deviceID), \(bind: session.createdAt.stored),
                    \(bind: session.proof?.thumbprint), \(bind: session.accessCodeID))
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

    static let sessionColumns = "s.id, s.user_id, s.device_id, s.created_at, s.revoked_at, s.dpop_thumbprint"

    static func session(from row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.string("id"), userID: try row.string("user_id"), deviceID: try row.optionalString("device_id"),
            createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"),
            dpopThumbprint: try row.optionalString("dpop_thumbprint"))
    }
}
