import Foundation
import LatchkeyAPI
import SQLKit

/// A user's TOTP factor; its secret only sealed with the master key.
package struct SecondFactorRecord: Sendable, Equatable {
    package var id: String
    package var userID: String
    package var type: FactorType
    package var sealedSecret: String
    package var createdAt: Date
    /// Nil while unconfirmed: such a factor gates nothing and verifies nothing but its own confirmation.
    package var confirmedAt: Date?
    /// The newest time step a code of it was accepted for; a code of that step or an older one is refused.
    package var lastStep: Int64?
}

/// A one-factor sign-in waiting for its second factor (the `mfa_token`'s row).
package struct SecondFactorChallengeRecord: Sendable, Equatable {
    package var userID: String
    package var deviceID: String?
    package var amr: [AuthenticationMethod]
    /// The key the sign-in's DPoP proof was made with: finishing it needs a proof with the same key.
    package var dpopThumbprint: String?
    package var expiresAt: Date
    package var failures: Int
    package var usedAt: Date?
}

/// What a right second factor spends, atomically with what it buys: a TOTP step of a factor (newer than its last), or
/// one unused recovery code.
package enum SecondFactorUse: Sendable, Equatable {
    case totp(factorID: String, step: Int64)
    case recoveryCode(hash: String)

    /// The `amr` value it adds.
    var method: AuthenticationMethod {
        switch self {
        case .totp: .otp
        case .recoveryCode: .recovery
        }
    }
}

/// What finishing a challenge did.
package enum ChallengeCompletion: Sendable, Equatable {
    /// The session is stored.
    case completed
    /// The `mfa_token` is unknown, expired, spent or used up by wrong codes; nothing changed.
    case challengeSpent
    /// The code was accepted before (its step, or the recovery code); nothing changed.
    case codeSpent
}

/// What a step-up did.
package enum StepUpOutcome: Sendable, Equatable {
    /// The session is `aal2` now, with a new refresh token.
    case steppedUp(SessionRecord)
    /// The code was accepted before; nothing changed.
    case codeSpent
    /// The session ended meanwhile; nothing changed.
    case sessionEnded
}

/// The rows of second factors: factors, recovery codes and challenges.
package protocol SecondFactorStore: Sendable {
    func secondFactors(ofUser userID: String) async throws -> [SecondFactorRecord]
    /// Stores `factor` (unconfirmed) in place of the user's unconfirmed one; false, nothing changed, when the user has a
    /// confirmed factor.
    func enrollFactor(_ factor: SecondFactorRecord) async throws -> Bool
    /// Confirms the user's unconfirmed factor `id` at `step`, replaces the user's recovery codes with `recoveryHashes`
    /// (under `salt`) and makes session `sessionID` `aal2` with `otp` in its `amr`, in one transaction; false when there is
    /// no such unconfirmed factor.
    func confirmFactor(
        id: String, userID: String, step: Int64, recoveryHashes: [String], salt: String, sessionID: String?, at time: Date
    ) async throws -> Bool
    func challenge(tokenHash: String) async throws -> SecondFactorChallengeRecord?
    /// Counts a wrong code against the challenge.
    func recordChallengeFailure(tokenHash: String) async throws
    /// The salt of the user's recovery codes and the hashes of the unused ones.
    func unusedRecoveryCodes(ofUser userID: String) async throws -> (salt: String, hashes: [String])?
    /// Spends the challenge and `use` and stores `session` (``NewSession/challenge`` nil), in one transaction.
    func completeChallenge(
        tokenHash: String, maxFailures: Int, use: SecondFactorUse, userID: String, session: NewSession, at time: Date
    ) async throws -> ChallengeCompletion
    /// Spends `use`, makes the live session `sessionID` `aal2` (its `amr` gaining `use`'s method) and gives it a new
    /// refresh token (`refreshHash`), every older one of it spent, in one transaction.
    func stepUp(
        sessionID: String, userID: String, use: SecondFactorUse, refreshHash: String, refreshExpiresAt: Date, at time: Date
    ) async throws -> StepUpOutcome
    /// Removes the user's factor `id`, and with the last confirmed one the recovery codes and pending challenges; false when
    /// the user has no such factor.
    func deleteFactor(id: String, userID: String, at time: Date) async throws -> Bool
    /// Removes every factor, recovery code and pending challenge of the user (support); returns how many factors.
    func resetSecondFactors(userID: String, at time: Date) async throws -> Int
    /// Replaces the user's recovery codes; false, nothing changed, when the user has no confirmed factor.
    func replaceRecoveryCodes(userID: String, hashes: [String], salt: String, at time: Date) async throws -> Bool
}

/// Thrown inside a transaction to roll back what it did when a code turns out spent.
private struct CodeSpent: Error {}

extension SQLLatchkeyStore: SecondFactorStore {
    package func secondFactors(ofUser userID: String) async throws -> [SecondFactorRecord] {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT id, user_id, type, sealed_secret, created_at, confirmed_at, last_step FROM mfa_factors
                WHERE user_id = \(bind: userID) ORDER BY created_at, id
                """
            ).all().map(Self.factor(from:))
        }
    }

    package func enrollFactor(_ factor: SecondFactorRecord) async throws -> Bool {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "second factors " + factor.userID, sql)
            guard try await !Self.hasConfirmedSecondFactor(userID: factor.userID, on: sql) else { return false }
            try await sql.raw("DELETE FROM mfa_factors WHERE user_id = \(bind: factor.userID) AND confirmed_at IS NULL").run()
            try await sql.raw(
                """
                INSERT INTO mfa_factors (id, user_id, type, sealed_secret, created_at)
                VALUES (\(bind: factor.id), \(bind: factor.userID), \(bind: factor.type.rawValue), \(bind: factor.sealedSecret),
                        \(bind: factor.createdAt.stored))
                """
            ).run()
            return true
        }
    }

    package func confirmFactor(
        id: String, userID: String, step: Int64, recoveryHashes: [String], salt: String, sessionID: String?, at time: Date
    ) async throws -> Bool {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "second factors " + userID, sql)
            let confirmed =
                try await sql.raw(
                    """
                    UPDATE mfa_factors SET confirmed_at = \(bind: time.stored), last_step = \(bind: step)
                    WHERE id = \(bind: id) AND user_id = \(bind: userID) AND confirmed_at IS NULL RETURNING id, type
                    """
                ).first()
            guard let confirmed else { return false }
            try await Self.emit(.mfaEnabled, userID: userID, ["factor_id": id, "factor_type": try confirmed.string("type")], at: time, on: sql)
            try await Self.storeRecoveryCodes(userID: userID, hashes: recoveryHashes, salt: salt, at: time, on: sql)
            if let sessionID { try await Self.raise(sessionID: sessionID, adding: .otp, at: time, on: sql) }
            return true
        }
    }

    package func challenge(tokenHash: String) async throws -> SecondFactorChallengeRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT user_id, device_id, amr, dpop_thumbprint, expires_at, failures, used_at FROM mfa_challenges
                WHERE token_hash = \(bind: tokenHash)
                """
            ).first().map { row in
                SecondFactorChallengeRecord(
                    userID: try row.string("user_id"), deviceID: try row.optionalString("device_id"),
                    amr: AuthenticationMethod.parse(stored: try row.optionalString("amr")), dpopThumbprint: try row.optionalString("dpop_thumbprint"),
                    expiresAt: try row.date("expires_at"), failures: try row.decode(column: "failures", as: Int.self),
                    usedAt: try row.optionalDate("used_at"))
            }
        }
    }

    package func recordChallengeFailure(tokenHash: String) async throws {
        try await self.database.transaction { sql in
            try await sql.raw("UPDATE mfa_challenges SET failures = failures + 1 WHERE token_hash = \(bind: tokenHash)").run()
        }
    }

    package func unusedRecoveryCodes(ofUser userID: String) async throws -> (salt: String, hashes: [String])? {
        let rows = try await self.database.read { sql in
            try await sql.raw("SELECT code_hash, salt FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL").all().map {
                (hash: try $0.string("code_hash"), salt: try $0.string("salt"))
            }
        }
        guard let salt = rows.first?.salt else { return nil }
        return (salt, rows.map(\.hash))
    }

    package func completeChallenge(
        tokenHash: String, maxFailures: Int, use: SecondFactorUse, userID: String, session: NewSession, at time: Date
    ) async throws -> ChallengeCompletion {
        do {
            return try await self.database.transaction { sql in
                let claimed =
                    try await sql.raw(
                        """
                        UPDATE mfa_challenges SET used_at = \(bind: time.stored)
                        WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL AND failures < \(bind: maxFailures)
                            AND expires_at > \(bind: time.stored)
                        RETURNING token_hash
                        """
                    ).first() != nil
                guard claimed else { return .challengeSpent }
                guard try await Self.spend(use, userID: userID, at: time, on: sql) else { throw CodeSpent() }
                var session = session
                session.challenge = nil
                try await Self.insert(session, on: sql)
                return .completed
            }
        } catch is CodeSpent {
            return .codeSpent
        }
    }

    package func stepUp(
        sessionID: String, userID: String, use: SecondFactorUse, refreshHash: String, refreshExpiresAt: Date, at time: Date
    ) async throws -> StepUpOutcome {
        do {
            return try await self.database.transaction { sql in
                guard
                    let row = try await sql.raw(
                        "SELECT \(unsafeRaw: Self.sessionColumns) FROM sessions s WHERE s.id = \(bind: sessionID) AND s.user_id = \(bind: userID)"
                    ).first(),
                    try row.optionalDate("revoked_at") == nil
                else { return .sessionEnded }
                guard try await Self.spend(use, userID: userID, at: time, on: sql) else { throw CodeSpent() }
                try await Self.raise(sessionID: sessionID, adding: use.method, at: time, on: sql)
                // The session's refresh tokens before this one are spent: presented later they are reuse, as after a rotation.
                try await sql.raw(
                    "UPDATE refresh_tokens SET used_at = \(bind: time.stored) WHERE session_id = \(bind: sessionID) AND used_at IS NULL"
                ).run()
                try await sql.raw(
                    """
                    INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at)
                    VALUES (\(bind: refreshHash), \(bind: sessionID), \(bind: time.stored), \(bind: refreshExpiresAt.stored))
                    """
                ).run()
                guard
                    let raised = try await sql.raw("SELECT \(unsafeRaw: Self.sessionColumns) FROM sessions s WHERE s.id = \(bind: sessionID)").first()
                else { return .sessionEnded }
                return .steppedUp(try Self.session(from: raised))
            }
        } catch is CodeSpent {
            return .codeSpent
        }
    }

    package func deleteFactor(id: String, userID: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "second factors " + userID, sql)
            let deleted = try await sql.raw(
                "DELETE FROM mfa_factors WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id, type, confirmed_at"
            ).all()
            guard !deleted.isEmpty else { return false }
            try await Self.emitFactorsRemoved(deleted, userID: userID, at: time, on: sql)
            if try await !Self.hasConfirmedSecondFactor(userID: userID, on: sql) {
                try await Self.forgetSecondFactors(userID: userID, on: sql)
            }
            return true
        }
    }

    package func resetSecondFactors(userID: String, at time: Date) async throws -> Int {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "second factors " + userID, sql)
            let removed = try await sql.raw("DELETE FROM mfa_factors WHERE user_id = \(bind: userID) RETURNING id, type, confirmed_at").all()
            try await Self.emitFactorsRemoved(removed, userID: userID, at: time, on: sql)
            try await Self.forgetSecondFactors(userID: userID, on: sql)
            return removed.count
        }
    }

    /// `mfa.disabled` for each confirmed factor among `rows` (deleted factors' `id, type, confirmed_at`), in the caller's
    /// transaction: a factor never confirmed was never enabled.
    private static func emitFactorsRemoved(_ rows: [any SQLRow], userID: String, at time: Date, on sql: any SQLDatabase) async throws {
        for row in rows where try row.optionalDate("confirmed_at") != nil {
            try await Self.emit(
                .mfaDisabled, userID: userID, ["factor_id": try row.string("id"), "factor_type": try row.string("type")], at: time, on: sql)
        }
    }

    package func replaceRecoveryCodes(userID: String, hashes: [String], salt: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "second factors " + userID, sql)
            guard try await Self.hasConfirmedSecondFactor(userID: userID, on: sql) else { return false }
            try await Self.storeRecoveryCodes(userID: userID, hashes: hashes, salt: salt, at: time, on: sql)
            return true
        }
    }

    /// Spends `use` inside the caller's transaction: a step newer than the factor's last (which becomes it), or an unused
    /// recovery code; false when it was spent before.
    private static func spend(_ use: SecondFactorUse, userID: String, at time: Date, on sql: any SQLDatabase) async throws -> Bool {
        switch use {
        case .totp(let factorID, let step):
            return try await sql.raw(
                """
                UPDATE mfa_factors SET last_step = \(bind: step)
                WHERE id = \(bind: factorID) AND user_id = \(bind: userID) AND confirmed_at IS NOT NULL
                    AND (last_step IS NULL OR last_step < \(bind: step))
                RETURNING id
                """
            ).first() != nil
        case .recoveryCode(let hash):
            return try await sql.raw(
                """
                UPDATE recovery_codes SET used_at = \(bind: time.stored)
                WHERE user_id = \(bind: userID) AND code_hash = \(bind: hash) AND used_at IS NULL RETURNING code_hash
                """
            ).first() != nil
        }
    }

    /// Marks the session `aal2` now, adding `method` to its `amr`.
    private static func raise(sessionID: String, adding method: AuthenticationMethod, at time: Date, on sql: any SQLDatabase) async throws {
        guard let row = try await sql.raw("SELECT \(unsafeRaw: Self.sessionColumns) FROM sessions s WHERE s.id = \(bind: sessionID)").first()
        else { return }
        var amr = SessionService.amr(of: try Self.session(from: row))
        if !amr.contains(method) { amr.append(method) }
        try await sql.raw(
            "UPDATE sessions SET aal2_at = \(bind: time.stored), amr = \(bind: AuthenticationMethod.stored(amr)) WHERE id = \(bind: sessionID)"
        ).run()
    }

    private static func storeRecoveryCodes(userID: String, hashes: [String], salt: String, at time: Date, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
        for hash in hashes {
            try await sql.raw(
                """
                INSERT INTO recovery_codes (user_id, code_hash, salt, created_at)
                VALUES (\(bind: userID), \(bind: hash), \(bind: salt), \(bind: time.stored))
                """
            ).run()
        }
    }

    private static func forgetSecondFactors(userID: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
        try await sql.raw("DELETE FROM mfa_challenges WHERE user_id = \(bind: userID)").run()
    }

    private static func factor(from row: any SQLRow) throws -> SecondFactorRecord {
        SecondFactorRecord(
            id: try row.string("id"), userID: try row.string("user_id"), type: FactorType(rawValue: try row.string("type")),
            sealedSecret: try row.string("sealed_secret"), createdAt: try row.date("created_at"), confirmedAt: try row.optionalDate("confirmed_at"),
            lastStep: try row.decode(column: "last_step", as: Int64?.self))
    }
}
