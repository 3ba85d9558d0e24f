import Foundation
import LatchkeyAPI
import SQLKit

/// A session about to be created, with the hash of its first refresh token.
package struct NewSession: Sendable {
    package var id: String
    package var userID: String
    package var deviceID: String?
    package var createdAt: Date
    package var refreshTokenHash: String
    package var refreshTokenExpiresAt: Date
    /// The DPoP proof the sign-in came with: the session is bound to its key, and its `jti` is spent with the session.
    package var proof: VerifiedProof?
    /// The access code this session was exchanged from: revoking the code ends the session.
    package var accessCodeID: String?
    /// How its user proved who they are (the `amr` claim).
    package var amr: [AuthenticationMethod] = []
    /// When it proved a second factor; nil for a session of one factor (`aal1`).
    package var aal2At: Date? = nil
    /// A sign-in that proved one factor: when the user has a confirmed second factor, this challenge is stored instead of
    /// the session (``SessionStart/challenged(_:)``), in the same transaction that would have stored the session.
    package var challenge: NewSecondFactorChallenge? = nil
    /// The claims of its first access token beyond the fixed ones, gathered while it is stored (``PendingClaims``).
    package var claims: PendingClaims? = nil
    /// The device's App Attest key, verified for this sign-in: stored with the session, in its transaction.
    package var attestation: AppAttestKeyRecord? = nil
}

/// The challenge a one-factor sign-in stores instead of its session for a user with a second factor: the `mfa_token`'s
/// hash and when it expires. The rest (user, device, `amr`, the DPoP key) comes from the session it stands for.
package struct NewSecondFactorChallenge: Sendable, Equatable {
    package var tokenHash: String
    package var expiresAt: Date
}

/// One of a user's confirmed second factors, as a challenge names it.
package struct SecondFactorReference: Sendable, Equatable {
    package var id: String
    package var type: FactorType
}

/// What storing a new session did.
package enum SessionStart: Sendable, Equatable {
    /// The session and its first refresh token are stored.
    case started
    /// The user has confirmed second factors (these): a challenge was stored instead of the session.
    case challenged([SecondFactorReference])
}

/// What presenting a refresh token did.
package enum RefreshRotation: Sendable, Equatable {
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
    /// The session refreshed as often as its limit allows in the window, which frees a refresh at `resetAt`; nothing
    /// was spent.
    case limited(SessionRecord, resetAt: Date)
    /// Unknown, expired, or belonging to a revoked session.
    case invalid
    /// The session's user is disabled (disabling revoked the session too): 403 `user_disabled`, nothing spent.
    case userDisabled
}

/// The per-session limit of successful refreshes, counted inside the rotation's own transaction.
package struct RefreshLimit: Sendable, Equatable {
    let bucket: String
    let limit: Int
    let window: TimeInterval
}

/// What a rotation did, and where the session stands against its refresh limit afterwards.
package struct RefreshResult: Sendable, Equatable {
    let rotation: RefreshRotation
    /// Refreshes left in the window and when its oldest one leaves it, when a limit was counted.
    var remaining: (count: Int, resetAt: Date)?

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rotation == rhs.rotation && lhs.remaining?.count == rhs.remaining?.count && lhs.remaining?.resetAt == rhs.remaining?.resetAt
    }
}

/// Sessions and their refresh-token families.
package protocol SessionStore: SessionLookup {
    /// Creates the session (spending its proof's `jti`), or its challenge instead when it has one and the user has a
    /// confirmed second factor; ``StoreError/conflict`` when the user does not exist.
    @discardableResult
    func createSession(_ session: NewSession) async throws -> SessionStart
    /// Spends the refresh token of session `sessionID` whose hash is `presentedHash`, atomically; a first use
    /// also marks the session's device as seen at `now`. `successorHash` must be the hash of the presented token's
    /// successor (derived from it), so a lost answer can be given again.
    ///
    /// A session bound to a DPoP key needs `proof` made with that key; one that is not gets bound to `proof`'s key,
    /// or, when `requireProof`, is refused without one. The proof's `jti` is spent in the same transaction
    /// (``DPoPRejection/replayed`` when it was spent before).
    ///
    /// With `limit`, a refresh that succeeds counts against it in the same transaction, and one past it is
    /// ``RefreshRotation/limited(_:resetAt:)`` before anything is spent.
    func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof?, requireProof: Bool, limit: RefreshLimit?, claims: PendingClaims?
    ) async throws -> RefreshResult
    /// Whether the session's refresh token with this hash has been used; nil when there is no such token.
    func isRefreshTokenSpent(sessionID: String, hash: String) async throws -> Bool?
    /// Revokes the user's live sessions, all or all but `keeping`; returns the IDs it revoked.
    func revokeSessions(ofUser userID: String, keeping: String?, reason: String, at time: Date) async throws -> [String]
    /// Revokes one session; returns whether it was live.
    func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool
    /// `logout global`: revokes every live session of the user and dooms the secrets of its keyless devices (each is
    /// replaced at the device's next `register-device`), in one transaction; returns the revoked sessions' IDs.
    func logOutEverywhere(userID: String, at time: Date) async throws -> [String]
    /// Whether the user has a confirmed second factor.
    func hasConfirmedSecondFactor(userID: String) async throws -> Bool
    /// Spends `proof`'s `jti` on its own (a proof standing in for a recent sign-in); ``DPoPRejection/replayed`` when it
    /// was spent before.
    func spendProof(_ proof: VerifiedProof) async throws
}

extension SessionStore {
    /// ``rotateRefreshToken(sessionID:presentedHash:successorHash:successorExpiresAt:now:graceWindow:proof:requireProof:limit:)``
    /// without a limit.
    func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof? = nil, requireProof: Bool = false
    ) async throws -> RefreshRotation {
        try await self.rotateRefreshToken(
            sessionID: sessionID, presentedHash: presentedHash, successorHash: successorHash, successorExpiresAt: successorExpiresAt, now: now,
            graceWindow: graceWindow, proof: proof, requireProof: requireProof, limit: nil, claims: nil
        ).rotation
    }
}

extension SQLLatchkeyStore: SessionStore {
    @discardableResult
    package func createSession(_ session: NewSession) async throws -> SessionStart {
        try await self.database.transaction { sql in try await Self.insert(session, on: sql) }
    }

    package func hasConfirmedSecondFactor(userID: String) async throws -> Bool {
        try await self.database.read { sql in try await Self.hasConfirmedSecondFactor(userID: userID, on: sql) }
    }

    /// Whether the user has a confirmed second factor, inside the caller's transaction.
    static func hasConfirmedSecondFactor(userID: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT id FROM mfa_factors WHERE user_id = \(bind: userID) AND confirmed_at IS NOT NULL").first() != nil
    }

    package func session(id: String) async throws -> SessionRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.sessionColumns) FROM sessions s WHERE s.id = \(bind: id)").first().map(Self.session(from:))
        }
    }

    package func rotateRefreshToken(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof?, requireProof: Bool, limit: RefreshLimit?, claims: PendingClaims?
    ) async throws -> RefreshResult {
        try await self.changing { sql, changes in
            var counted: (count: Int, oldest: Date?)?
            let rotation = try await Self.rotate(
                sessionID: sessionID, presentedHash: presentedHash, successorHash: successorHash, successorExpiresAt: successorExpiresAt,
                now: now, graceWindow: graceWindow, proof: proof, requireProof: requireProof, claims: claims, on: sql, noting: changes
            ) { session in
                guard let limit else { return nil }
                // On PostgreSQL concurrent refreshes of one session would each count the same hits: one at a time.
                try await Self.serialize(on: "rate-limit " + limit.bucket, sql)
                let hits = try await Self.hits(bucket: limit.bucket, window: limit.window, now: now, on: sql)
                counted = hits
                return hits.count >= limit.limit ? .limited(session, resetAt: (hits.oldest ?? now) + limit.window) : nil
            }
            // A rotation marks the device last seen now, which the profile shows.
            if case .rotated(let session) = rotation { changes.note(.userChanged(session.userID)) }
            // Only a refresh that succeeds counts against the session's limit.
            switch rotation {
            case .rotated(let session), .unclaimedSuccessor(let session), .withinGrace(let session):
                // Under `refuse` a failing claims hook rolls the rotation back: the same refresh token works again.
                try await claims?.callHookBeforeCommit(amr: session.amr, on: sql)
                guard let limit, let counted else { return RefreshResult(rotation: rotation) }
                try await Self.recordHit(bucket: limit.bucket, at: now, on: sql)
                return RefreshResult(rotation: rotation, remaining: (limit.limit - counted.count - 1, (counted.oldest ?? now) + limit.window))
            default:
                return RefreshResult(rotation: rotation)
            }
        }
    }

    /// The rotation itself, inside the caller's transaction; `checkLimit` (given the session) may stop it, with its
    /// answer, before anything is spent.
    private static func rotate(
        sessionID: String, presentedHash: String, successorHash: String, successorExpiresAt: Date, now: Date, graceWindow: TimeInterval,
        proof: VerifiedProof?, requireProof: Bool, claims: PendingClaims?, on sql: any SQLDatabase, noting changes: StoreChanges.Notes,
        checkLimit: (SessionRecord) async throws -> RefreshRotation?
    ) async throws -> RefreshRotation {
        guard
            let row = try await sql.raw(
                """
                SELECT r.expires_at, r.used_at, \(unsafeRaw: Self.sessionColumns),
                    u.kind AS user_kind, u.app_metadata AS user_app_metadata, u.disabled_at AS user_disabled_at
                FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
                WHERE r.session_id = \(bind: sessionID) AND r.token_hash = \(bind: presentedHash)
                """
            ).first()
        else { return .invalid }
        let session = try Self.session(from: row)
        // Before the revocation check: disabling revoked the session, and its refresh answers user_disabled, not invalid_grant.
        guard try row.optionalDate("user_disabled_at") == nil else { return .userDisabled }
        // The user as the token will carry them (`app_metadata`): read by this statement, no other.
        claims?.read(
            ClaimsSubject(
                userID: session.userID, kind: UserKind(rawValue: try row.string("user_kind")),
                appMetadata: try row.optionalString("user_app_metadata").flatMap(JSONValue.object(parsing:))))
        guard session.revokedAt == nil, try row.date("expires_at") > now else { return .invalid }
        if let bound = session.dpopThumbprint {
            guard proof?.thumbprint == bound else { return .proofRequired(session) }
        } else if proof == nil && requireProof {
            return .proofRequired(session)
        }
        if let refused = try await checkLimit(session) { return refused }
        if session.dpopThumbprint == nil, let proof {
            // A session started without a key (an older app) is bound to the key its app now proves.
            try await sql.raw("UPDATE sessions SET dpop_thumbprint = \(bind: proof.thumbprint) WHERE id = \(bind: session.id)").run()
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
            // The session was last used now (`users/me/sessions` shows the day), in the rotation's transaction.
            try await sql.raw("UPDATE sessions SET last_used_at = \(bind: now.stored) WHERE id = \(bind: session.id)").run()
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
        let presented = try await sql.raw(
            "SELECT used_at, handed_back FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: presentedHash)"
        ).first()
        let usedAt = try presented?.optionalDate("used_at") ?? now
        let late = now.timeIntervalSince(usedAt) > graceWindow
        let handedBack = try presented?.decode(column: "handed_back", as: Int.self) ?? 0
        // Spent before. A successor nobody used means the first answer never arrived: give it again. Within the grace
        // window that is one app's concurrent refreshes; later it may as well be a copy presented beside its owner, so the
        // successor is marked, and a late hand-back of a token itself handed back late (two holders taking turns) is reuse.
        let successor = try await sql.raw(
            "SELECT used_at, expires_at FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: successorHash)"
        ).first()
        if let successor, try successor.optionalDate("used_at") == nil, try successor.date("expires_at") > now,
            !late || handedBack == 0
        {
            if late {
                try await sql.raw(
                    "UPDATE refresh_tokens SET handed_back = 1 WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: successorHash)"
                ).run()
            }
            return .unclaimedSuccessor(session)
        }
        if !late {
            return .withinGrace(session)
        }
        try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now.stored), revoked_reason = 'refresh_token_reuse'
            WHERE id = \(bind: session.id) AND revoked_at IS NULL
            """
        ).run()
        try await Self.emitRevoked(session.id, userID: session.userID, deviceID: session.deviceID, reason: "refresh_token_reuse", at: now, on: sql)
        try await Self.recordRevocation(scope: .session, values: [session.id], at: now, on: sql, noting: changes)
        return .reuseDetected(session)
    }

    package func isRefreshTokenSpent(sessionID: String, hash: String) async throws -> Bool? {
        try await self.database.read { sql in
            try await sql.raw("SELECT used_at FROM refresh_tokens WHERE session_id = \(bind: sessionID) AND token_hash = \(bind: hash)")
                .first().map { row in
                    try row.optionalDate("used_at") != nil
                }
        }
    }

    package func revokeSessions(ofUser userID: String, keeping: String?, reason: String, at time: Date) async throws -> [String] {
        try await self.changing { sql, changes in
            // Support ending them all (no session kept) signs the user out.
            if keeping == nil { changes.note(.userSignedOut(userID)) }
            return try await Self.revokeSessions(
                where: "user_id = \(bind: userID) AND id <> \(bind: keeping ?? "")", reason: reason, at: time, on: sql, noting: changes)
        }
    }

    package func revokeSession(id: String, reason: String, at time: Date) async throws -> Bool {
        try await self.changing { sql, changes in
            try await !Self.revokeSessions(where: "id = \(bind: id)", reason: reason, at: time, on: sql, noting: changes).isEmpty
        }
    }

    package func logOutEverywhere(userID: String, at time: Date) async throws -> [String] {
        try await self.changing { sql, changes in
            changes.note(.userSignedOut(userID))
            try await sql.raw("UPDATE devices SET secret_rotation_due = 1 WHERE user_id = \(bind: userID) AND key_thumbprint IS NULL").run()
            return try await Self.revokeSessions(where: "user_id = \(bind: userID)", reason: "logout_global", at: time, on: sql, noting: changes)
        }
    }

    /// Revokes the live sessions `condition` selects, inside the caller's transaction, and puts them in the feed.
    static func revokeSessions(
        where condition: SQLQueryString, reason: String, at time: Date, on sql: any SQLDatabase, noting changes: StoreChanges.Notes
    ) async throws -> [String] {
        let rows = try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: time.stored), revoked_reason = \(bind: reason)
            WHERE \(condition) AND revoked_at IS NULL RETURNING id, user_id, device_id
            """
        ).all()
        var revoked: [String] = []
        for row in rows {
            revoked.append(try row.string("id"))
            try await Self.emitRevoked(
                try row.string("id"), userID: try row.string("user_id"), deviceID: try row.optionalString("device_id"), reason: reason, at: time,
                on: sql)
        }
        try await Self.recordRevocation(scope: .session, values: revoked, at: time, on: sql, noting: changes)
        return revoked
    }

    /// Writes `session.revoked` for a session just revoked with the stored `reason`, in the caller's transaction.
    static func emitRevoked(
        _ sessionID: String, userID: String, deviceID: String?, reason: String, at time: Date, on sql: any SQLDatabase
    ) async throws {
        var data = ["session_id": sessionID, "reason": SessionRevocationReason(stored: reason).rawValue]
        data["device_id"] = deviceID
        try await Self.emit(.sessionRevoked, userID: userID, data, at: time, on: sql)
    }

    /// Stores `session` inside the caller's transaction, or — when it carries a challenge and its user has a confirmed
    /// second factor — the challenge instead (read in the same transaction, so a factor confirmed meanwhile gates it).
    @discardableResult
    static func insert(_ session: NewSession, on sql: any SQLDatabase) async throws -> SessionStart {
        // Every sign-in stores its session here: a disabled user's is refused (user_disabled) in its own transaction.
        if let subject = try await Self.claimsSubject(ofUser: session.userID, locking: true, on: sql) { session.claims?.read(subject) }
        try await Self.spend(session.proof, on: sql)
        if let challenge = session.challenge {
            let factors = try await sql.raw(
                """
                SELECT id, type FROM mfa_factors WHERE user_id = \(bind: session.userID) AND confirmed_at IS NOT NULL
                ORDER BY created_at, id
                """
            ).all().map { SecondFactorReference(id: try $0.string("id"), type: FactorType(rawValue: try $0.string("type"))) }
            if !factors.isEmpty {
                try await sql.raw(
                    """
                    INSERT INTO mfa_challenges (token_hash, user_id, device_id, amr, dpop_thumbprint, created_at, expires_at, failures)
                    VALUES (\(bind: challenge.tokenHash), \(bind: session.userID), \(bind: session.deviceID),
                            \(bind: AuthenticationMethod.stored(session.amr)), \(bind: session.proof?.thumbprint),
                            \(bind: session.createdAt.stored), \(bind: challenge.expiresAt.stored), 0)
                    """
                ).run()
                return .challenged(factors)
            }
        }
        try await session.claims?.callHookBeforeCommit(amr: session.amr, on: sql)
        if var attestation = session.attestation {
            attestation.userID = session.userID
            try await Self.storeAttestedKey(attestation, on: sql)
        }
        try await sql.raw(
            """
            INSERT INTO sessions (id, user_id, device_id, created_at, dpop_thumbprint, access_code_id, amr, aal2_at, method, last_used_at)
            VALUES (\(bind: session.id), \(bind: session.userID), \(bind: session.deviceID), \(bind: session.createdAt.stored),
                    \(bind: session.proof?.thumbprint), \(bind: session.accessCodeID), \(bind: AuthenticationMethod.stored(session.amr)),
                    \(bind: session.aal2At?.stored), \(bind: SessionMethod.of(amr: session.amr)), \(bind: session.createdAt.stored))
            """
        ).run()
        var data = ["session_id": session.id]
        data["device_id"] = session.deviceID
        try await Self.emit(.sessionCreated, userID: session.userID, data, at: session.createdAt, on: sql)
        try await sql.raw(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at)
            VALUES (\(bind: session.refreshTokenHash), \(bind: session.id), \(bind: session.createdAt.stored),
                    \(bind: session.refreshTokenExpiresAt.stored))
            """
        ).run()
        return .started
    }

    static let sessionColumns =
        "s.id, s.user_id, s.device_id, s.created_at, s.revoked_at, s.dpop_thumbprint, s.access_code_id, s.amr, s.aal2_at"

    static func session(from row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.string("id"), userID: try row.string("user_id"), deviceID: try row.optionalString("device_id"),
            createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"),
            dpopThumbprint: try row.optionalString("dpop_thumbprint"), accessCodeID: try row.optionalString("access_code_id"),
            amr: AuthenticationMethod.parse(stored: try row.optionalString("amr")), aal2At: try row.optionalDate("aal2_at"))
    }
}

extension AuthenticationMethod {
    /// The stored form of an `amr` list: its values joined by spaces (none contains one).
    static func stored(_ methods: [AuthenticationMethod]) -> String { methods.map(\.rawValue).joined(separator: " ") }

    /// The list ``stored(_:)`` wrote; empty for a session stored before sessions kept one.
    static func parse(stored: String?) -> [AuthenticationMethod] {
        (stored ?? "").split(separator: " ").map { AuthenticationMethod(rawValue: String($0)) }
    }
}
