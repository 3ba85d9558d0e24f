import Foundation
import SQLKit

/// An admin's TOTP factor as stored: the sealed secret, when it was confirmed (nil: an enrolment in progress), and the
/// newest step a code of it was accepted for.
struct AdminTOTPRecord: Sendable {
    var sealedSecret: String
    var confirmedAt: Date?
    var lastStep: Int64?
}

extension SQLLatchkeyStore {
    func adminTOTP(adminID: String) async throws -> AdminTOTPRecord? {
        try await self.database.read { sql in
            guard
                let row = try await sql.raw(
                    "SELECT sealed_totp_secret, totp_confirmed_at, totp_last_step FROM admin_accounts WHERE id = \(bind: adminID)"
                ).first(),
                let sealed = try row.optionalString("sealed_totp_secret")
            else { return nil }
            return AdminTOTPRecord(
                sealedSecret: sealed, confirmedAt: try row.optionalDate("totp_confirmed_at"),
                lastStep: try row.decode(column: "totp_last_step", as: Int64?.self))
        }
    }

    /// The admin's unconfirmed sealed secret, `sealed` stored first when there is none; nil when the admin has a
    /// confirmed factor (or no account).
    func pendingAdminSecret(adminID: String, orStore sealed: String) async throws -> String? {
        try await self.database.transaction { sql in
            try await sql.raw(
                "UPDATE admin_accounts SET sealed_totp_secret = \(bind: sealed) WHERE id = \(bind: adminID) AND sealed_totp_secret IS NULL"
            ).run()
            guard
                let row = try await sql.raw("SELECT sealed_totp_secret, totp_confirmed_at FROM admin_accounts WHERE id = \(bind: adminID)").first(),
                try row.optionalDate("totp_confirmed_at") == nil
            else { return nil }
            return try row.optionalString("sealed_totp_secret")
        }
    }

    /// Confirms the admin's enrolment of `sealedSecret` with a code of `step`, stores the recovery codes (replacing any)
    /// and marks the session `sessionIDHash` as past the second step; false when that enrolment is no longer pending.
    func confirmAdminTOTP(
        adminID: String, sealedSecret: String, step: Int64, recoveryHashes: [String], salt: String, sessionIDHash: String, at time: Date
    ) async throws -> Bool {
        try await self.database.transaction { sql in
            let confirmed = try await sql.raw(
                """
                UPDATE admin_accounts SET totp_confirmed_at = \(bind: time.stored), totp_last_step = \(bind: step)
                WHERE id = \(bind: adminID) AND sealed_totp_secret = \(bind: sealedSecret) AND totp_confirmed_at IS NULL RETURNING id
                """
            ).first()
            guard confirmed != nil else { return false }
            try await sql.raw("DELETE FROM admin_recovery_codes WHERE admin_id = \(bind: adminID)").run()
            for hash in recoveryHashes {
                try await sql.raw(
                    """
                    INSERT INTO admin_recovery_codes (admin_id, code_hash, salt, created_at)
                    VALUES (\(bind: adminID), \(bind: hash), \(bind: salt), \(bind: time.stored))
                    """
                ).run()
            }
            try await Self.passSecondStep(sessionIDHash: sessionIDHash, adminID: adminID, on: sql)
            return true
        }
    }

    func unusedAdminRecoveryCodes(adminID: String) async throws -> (salt: String, hashes: [String])? {
        try await self.database.read { sql in
            let rows = try await sql.raw(
                "SELECT code_hash, salt FROM admin_recovery_codes WHERE admin_id = \(bind: adminID) AND used_at IS NULL"
            ).all()
            guard let first = rows.first else { return nil }
            return (try first.string("salt"), try rows.map { try $0.string("code_hash") })
        }
    }

    /// Spends `use` (only a step newer than the last accepted; only an unused recovery code) and marks the session
    /// `sessionIDHash` as past the second step, in one transaction; nil when `use` was spent meanwhile.
    func passAdminSecondStep(adminID: String, use: AdminCodeUse, sessionIDHash: String, at time: Date) async throws -> AdminSecondStep? {
        try await self.database.transaction { sql in
            let passed: AdminSecondStep
            switch use {
            case .totp(let step):
                let spent = try await sql.raw(
                    """
                    UPDATE admin_accounts SET totp_last_step = \(bind: step)
                    WHERE id = \(bind: adminID) AND totp_confirmed_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < \(bind: step))
                    RETURNING id
                    """
                ).first()
                guard spent != nil else { return nil }
                passed = .authenticatorCode
            case .recoveryCode(let hash):
                let spent = try await sql.raw(
                    """
                    UPDATE admin_recovery_codes SET used_at = \(bind: time.stored)
                    WHERE admin_id = \(bind: adminID) AND code_hash = \(bind: hash) AND used_at IS NULL RETURNING code_hash
                    """
                ).first()
                guard spent != nil else { return nil }
                let remaining = try await sql.raw(
                    "SELECT COUNT(*) AS n FROM admin_recovery_codes WHERE admin_id = \(bind: adminID) AND used_at IS NULL"
                ).first()?.decode(column: "n", as: Int.self)
                passed = .recoveryCode(remaining: remaining ?? 0)
            }
            try await Self.passSecondStep(sessionIDHash: sessionIDHash, adminID: adminID, on: sql)
            return passed
        }
    }

    /// Removes the factor and recovery codes of the admin of `emailKey` and ends their sessions; their ID, or nil when
    /// there is no such admin.
    func resetAdminSecondFactor(emailKey: String) async throws -> String? {
        try await self.database.transaction { sql in
            guard
                let row = try await sql.raw(
                    """
                    UPDATE admin_accounts SET sealed_totp_secret = NULL, totp_confirmed_at = NULL, totp_last_step = NULL
                    WHERE email_key = \(bind: emailKey) RETURNING id
                    """
                ).first()
            else { return nil }
            let id = try row.string("id")
            try await sql.raw("DELETE FROM admin_recovery_codes WHERE admin_id = \(bind: id)").run()
            try await sql.raw("DELETE FROM admin_sessions WHERE admin_id = \(bind: id)").run()
            return id
        }
    }

    private static func passSecondStep(sessionIDHash: String, adminID: String, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            "UPDATE admin_sessions SET mfa_passed = 1 WHERE id_hash = \(bind: sessionIDHash) AND admin_id = \(bind: adminID)"
        ).run()
    }
}
