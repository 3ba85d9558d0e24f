import Foundation

/// An admin's enrolment in progress: the secret to type into an authenticator app, and the `otpauth://` URI its QR
/// code holds.
package struct AdminEnrolment: Sendable {
    package var secret: String
    package var uri: String
}

/// How a sign-in passed its second step.
package enum AdminSecondStep: Sendable, Equatable {
    case authenticatorCode
    /// A recovery code, now spent; `remaining` are left unused.
    case recoveryCode(remaining: Int)
}

/// Admins' second factors, by the rules of app users' (``SecondFactorService``): a TOTP secret of 160 bits sealed with
/// the master key, a code accepted once (±1 step), ten recovery codes each used once (any case, with or without the
/// dash). Wrong codes, at the enrolment and at sign-in, count per admin against `limits.login-failures` in a count of
/// their own (`admin-mfa <id>`), as passwords do per address.
extension AdminService {
    /// The sealing context of an admin's TOTP secret.
    static func sealContext(adminID: String) -> String { "admin totp secret \(adminID)" }

    /// The secret the session's admin is enrolling: the one not yet confirmed, else a new one (stored sealed, so a
    /// reload shows the same); nil when the admin has a confirmed factor (a new one only after `latchkey admin mfa-reset`).
    package func enrolment(session: AdminSession) async throws -> AdminEnrolment? {
        let fresh = try TOTPSecret.generate().sealed(with: self.masterKey, context: Self.sealContext(adminID: session.adminID))
        guard let sealed = try await self.store.pendingAdminSecret(adminID: session.adminID, orStore: fresh) else { return nil }
        let secret = try self.openSecret(sealed, adminID: session.adminID)
        return AdminEnrolment(secret: secret.base32, uri: secret.uri(issuer: self.issuer, account: session.email))
    }

    /// Confirms the session's enrolment with a code of its secret: the factor counts from now, the session has passed
    /// the second step, and the ten recovery codes returned are shown this once. A wrong code is
    /// ``ServiceError/invalidSecondFactorCode``; ``ServiceError/notFound(_:)`` when there is nothing to confirm.
    package func confirmEnrolment(code: String, session: AdminSession) async throws -> [String] {
        let codes = RecoveryCode.generateSet()
        let salt = RecoveryCode.makeSalt()
        let hashes = RecoveryCode.hashes(of: codes, salt: salt)
        let confirmed = try await self.countingCodes(adminID: session.adminID) { () -> Bool? in
            guard let factor = try await self.store.adminTOTP(adminID: session.adminID), factor.confirmedAt == nil else {
                throw ServiceError.notFound("There is no enrolment to confirm: open the enrolment page again.")
            }
            guard let step = try self.openSecret(factor.sealedSecret, adminID: session.adminID).matchingStep(code, at: self.clock.now()) else {
                return nil
            }
            return try await self.store.confirmAdminTOTP(
                adminID: session.adminID, sealedSecret: factor.sealedSecret, step: step, recoveryHashes: hashes, salt: salt,
                sessionIDHash: session.idHash, at: self.clock.now())
        }
        guard confirmed else { throw ServiceError.notFound("There is no enrolment to confirm: open the enrolment page again.") }
        return codes
    }

    /// Passes the second step of the session's sign-in with a code from the admin's authenticator app or one of their
    /// recovery codes (spent). A wrong or used code is ``ServiceError/invalidSecondFactorCode``, the same for both.
    package func passSecondStep(code: String, session: AdminSession) async throws -> AdminSecondStep {
        try await self.countingCodes(adminID: session.adminID) { () -> AdminSecondStep? in
            guard let use = try await self.use(code, adminID: session.adminID) else { return nil }
            return try await self.store.passAdminSecondStep(adminID: session.adminID, use: use, sessionIDHash: session.idHash, at: self.clock.now())
        }
    }

    /// Removes the factor and the recovery codes of the admin of `email` and ends their sessions (a lost authenticator
    /// app): they sign in with the password, then enrol again. Their count of wrong codes is forgotten. False when there
    /// is no such admin.
    package func resetSecondFactor(email: String) async throws -> Bool {
        guard let id = try await self.store.resetAdminSecondFactor(emailKey: EmailAddress.lookupKey(email)) else { return false }
        try await self.limiter.reset(self.limits.loginFailures, key: "admin-mfa " + id)
        return true
    }

    /// What `code` would spend for the admin, or nil when it is wrong or used: a TOTP step newer than the last accepted,
    /// or an unused recovery code (every one compared in constant time).
    private func use(_ code: String, adminID: String) async throws -> AdminCodeUse? {
        let typed = code.filter { !$0.isWhitespace }
        if typed.count == TOTPSecret.digits, typed.allSatisfy(\.isASCIIDigit) {
            guard let factor = try await self.store.adminTOTP(adminID: adminID), factor.confirmedAt != nil,
                let step = try self.openSecret(factor.sealedSecret, adminID: adminID).matchingStep(typed, at: self.clock.now()),
                step > (factor.lastStep ?? Int64.min)
            else { return nil }
            return .totp(step: step)
        }
        guard let stored = try await self.store.unusedAdminRecoveryCodes(adminID: adminID) else { return nil }
        return RecoveryCode.match(code, salt: stored.salt, among: stored.hashes).map { .recoveryCode(hash: $0) }
    }

    /// Runs `check` as one attempt of the admin against `limits.login-failures` (`admin-mfa <id>`): nil (a wrong code)
    /// counts and is ``ServiceError/invalidSecondFactorCode``; over the limit nothing is checked (429).
    private func countingCodes<Value>(adminID: String, _ check: () async throws -> Value?) async throws -> Value {
        let value = try await self.limiter.attempting(
            self.limits.loginFailures, key: "admin-mfa " + adminID,
            refusal: { resetAt in
                ServiceError.tooManySecondFactorAttempts(retryAfter: RateLimiter.seconds(until: resetAt, from: self.clock.now()))
            },
            failed: { $0 == nil }, check)
        guard let value else { throw ServiceError.invalidSecondFactorCode }
        return value
    }

    private func openSecret(_ sealed: String, adminID: String) throws -> TOTPSecret {
        try TOTPSecret(sealed: sealed, context: Self.sealContext(adminID: adminID), masterKey: self.masterKey)
    }
}

/// What a code spends: a TOTP step, or a recovery code (by its hash).
enum AdminCodeUse: Sendable {
    case totp(step: Int64)
    case recoveryCode(hash: String)
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
