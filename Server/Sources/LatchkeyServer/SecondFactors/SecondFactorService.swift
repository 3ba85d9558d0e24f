import Foundation
import LatchkeyAPI
import Logging

/// TOTP factors and recovery codes: enrolment and confirmation, finishing a sign-in that proved one factor
/// (`mfa_token`), a signed-in session's step-up, and support's reset.
///
/// A code is accepted once per factor: each accepted code's time step is stored and only a later step verifies again.
/// A wrong code and a used one take the same path and get the same answer (400 `invalid_code`); both count against the
/// `mfa_token` (five spend it) and against the user (`limits.mfa-failures`: then every verify of the user, the right
/// code included, is 429 until the oldest failure leaves the window).
package struct SecondFactorService: Sendable {
    let store: any SecondFactorStore
    let sessions: SessionService
    let accounts: EmailAccountService
    let masterKey: MasterKey
    let limiter: RateLimiter
    let policy: SecondFactorPolicy
    /// What an authenticator app shows as the issuer: `mfa.issuer`, else `email.app-name`.
    let issuer: String
    let audit: AuditLog
    let clock: any WallClock
    let logger: Logger

    /// The sealing context of a factor's secret.
    static func sealContext(factorID: String) -> String { "totp secret \(factorID)" }

    // MARK: Enrolment

    /// A new unconfirmed TOTP factor for the token's user (replacing an unconfirmed one); its secret is shown this once.
    package func enroll(token: VerifiedToken, proof: VerifiedProof?) async throws -> TOTPEnrollmentResponse {
        try await self.sessions.requireRecentAuthentication(token, proof: proof)
        try await self.sessions.requireStepUp(token)
        let secret = TOTPSecret.generate()
        let id = UUID().uuidString.lowercased()
        let factor = SecondFactorRecord(
            id: id, userID: token.userID, type: .totp,
            sealedSecret: try secret.sealed(with: self.masterKey, context: Self.sealContext(factorID: id)), createdAt: self.clock.now())
        guard try await self.store.enrollFactor(factor) else { throw ServiceError.factorExists }
        let account = try await self.accounts.account(userID: token.userID)?.email ?? token.userID
        return TOTPEnrollmentResponse(factorID: id, secret: secret.base32, otpauthURI: secret.uri(issuer: self.issuer, account: account))
    }

    /// Confirms the user's unconfirmed factor `factorID` with a code of it; returns the new recovery codes (shown this
    /// once). The confirming session becomes `aal2` (its next access token says so).
    package func confirm(factorID: String, code: String, token: VerifiedToken) async throws -> [String] {
        let factors = try await self.store.secondFactors(ofUser: token.userID)
        guard let factor = factors.first(where: { $0.id == factorID.lowercased() }), factor.confirmedAt == nil else {
            throw ServiceError.notFound("This account has no unconfirmed factor with this ID: enroll again with POST /api/v1/mfa/totp.")
        }
        let step = try await self.counting(userID: token.userID) { try self.step(of: code, for: factor) }
        let codes = RecoveryCode.generateSet()
        let salt = RecoveryCode.makeSalt()
        guard
            try await self.store.confirmFactor(
                id: factor.id, userID: token.userID, step: step, recoveryHashes: RecoveryCode.hashes(of: codes, salt: salt), salt: salt,
                sessionID: token.sessionID, at: self.clock.now())
        else { throw ServiceError.notFound("This factor was confirmed or removed meanwhile.") }
        try await self.audit.record(.user(token.userID), AuditAction.mfaEnable, target: "user \(token.userID)", details: "totp \(factor.id)")
        await self.accounts.tellSignInChanged(userID: token.userID, "An authenticator app was set up as a second factor for your account.")
        return codes
    }

    // MARK: Verification

    /// `POST /api/v1/mfa/verify`: with an `mfa_token`, finishes that sign-in (a new `aal2` session, bound to `proof`'s
    /// key); without one, steps up `bearer`'s session (a new token pair for it at `aal2`).
    package func verify(_ request: MFAVerifyRequest, bearer: VerifiedToken?, proof: VerifiedProof?) async throws -> TokenPairResponse {
        let presented = try Self.presented(request)
        if let mfaToken = request.mfaToken { return try await self.finishSignIn(mfaToken: mfaToken, presented: presented, proof: proof) }
        guard let bearer else {
            throw ServiceError.invalidRequest(
                "Send mfa_token (from the 403 mfa_required of a sign-in), or this session's Bearer to step up; with code or recovery_code.")
        }
        return try await self.stepUp(bearer, presented: presented)
    }

    private enum Presented {
        case code(String)
        case recoveryCode(String)
    }

    private static func presented(_ request: MFAVerifyRequest) throws -> Presented {
        switch (request.code, request.recoveryCode) {
        case (let code?, nil): return .code(code)
        case (nil, let recovery?): return .recoveryCode(recovery)
        default: throw ServiceError.invalidRequest("Send exactly one of code (6 digits from the authenticator app) and recovery_code.")
        }
    }

    private func finishSignIn(mfaToken: String, presented: Presented, proof: VerifiedProof?) async throws -> TokenPairResponse {
        let tokenHash = Secret.hash(mfaToken)
        let now = self.clock.now()
        guard let challenge = try await self.store.challenge(tokenHash: tokenHash), challenge.usedAt == nil, challenge.expiresAt > now,
            challenge.failures < SecondFactorPolicy.challengeFailures
        else { throw ServiceError.invalidMFAToken }
        try self.sessions.checkProofPolicy(proof)
        if let bound = challenge.dpopThumbprint, proof?.thumbprint != bound {
            throw ServiceError.invalidRequest(
                "This sign-in began with a DPoP proof: finish it with a proof made with the same key.", code: .invalidDPoPProof)
        }
        let use: SecondFactorUse
        do {
            use = try await self.counting(userID: challenge.userID) { try await self.use(presented, userID: challenge.userID) }
        } catch ServiceError.invalidCode {
            try await self.store.recordChallengeFailure(tokenHash: tokenHash)
            throw ServiceError.invalidSecondFactorCode
        }
        let (session, refreshToken, _) = self.sessions.makeSession(
            userID: challenge.userID, deviceID: challenge.deviceID, proof: proof, amr: challenge.amr + [use.method], aal2At: now)
        switch try await self.store.completeChallenge(
            tokenHash: tokenHash, maxFailures: SecondFactorPolicy.challengeFailures, use: use, userID: challenge.userID, session: session, at: now)
        {
        case .completed: break
        case .challengeSpent: throw ServiceError.invalidMFAToken
        case .codeSpent:
            // Spent by a concurrent verify between the check and the transaction: as any used code.
            try await self.store.recordChallengeFailure(tokenHash: tokenHash)
            throw ServiceError.invalidSecondFactorCode
        }
        await self.recordRecoveryCodeUse(use, userID: challenge.userID)
        return try await self.sessions.tokenPair(session, refreshToken: refreshToken)
    }

    private func stepUp(_ token: VerifiedToken, presented: Presented) async throws -> TokenPairResponse {
        guard token.kind == .session, let sessionID = token.sessionID else {
            throw ServiceError.forbidden("Only a session's access token can step up; guest tokens and access codes cannot.")
        }
        let use = try await self.counting(userID: token.userID) { try await self.use(presented, userID: token.userID) }
        let refreshToken = RefreshToken.make(sessionID: sessionID, secret: Secret.generate())
        let now = self.clock.now()
        switch try await self.store.stepUp(
            sessionID: sessionID, userID: token.userID, use: use, refreshHash: Secret.hash(refreshToken),
            refreshExpiresAt: now.addingTimeInterval(self.sessions.policy.refreshLifetime), at: now)
        {
        case .steppedUp(let session):
            await self.recordRecoveryCodeUse(use, userID: token.userID)
            return try await self.sessions.tokenPair(session, refreshToken: refreshToken)
        case .codeSpent: throw ServiceError.invalidSecondFactorCode
        case .sessionEnded: throw TokenRejection.revoked
        }
    }

    /// Runs `check` as one attempt of the user against `limits.mfa-failures`: a wrong (or used) code counts; over the
    /// limit nothing is checked and the answer is 429.
    private func counting<T>(userID: String, _ check: () async throws -> T) async throws -> T {
        let result: Result<T, ServiceError> = try await self.limiter.attempting(
            self.policy.failures, key: userID,
            refusal: { resetAt in
                ServiceError.tooManySecondFactorAttempts(retryAfter: RateLimiter.seconds(until: resetAt, from: self.clock.now()))
            },
            failed: { if case .failure = $0 { true } else { false } }
        ) {
            do { return .success(try await check()) } catch let error as ServiceError where error.kind == .invalidCode { return .failure(error) }
        }
        switch result {
        case .success(let value): return value
        case .failure: throw ServiceError.invalidSecondFactorCode
        }
    }

    /// What `presented` would spend for the user: a TOTP step newer than the factor's last, or an unused recovery code;
    /// ``ServiceError/invalidSecondFactorCode`` when it is wrong or was used.
    private func use(_ presented: Presented, userID: String) async throws -> SecondFactorUse {
        switch presented {
        case .code(let code):
            let confirmed = try await self.store.secondFactors(ofUser: userID).filter { $0.confirmedAt != nil && $0.type == .totp }
            for factor in confirmed {
                if let step = try? self.step(of: code, for: factor) { return .totp(factorID: factor.id, step: step) }
            }
            throw ServiceError.invalidSecondFactorCode
        case .recoveryCode(let text):
            guard let stored = try await self.store.unusedRecoveryCodes(ofUser: userID),
                let matched = RecoveryCode.match(text, salt: stored.salt, among: stored.hashes)
            else { throw ServiceError.invalidSecondFactorCode }
            return .recoveryCode(hash: matched)
        }
    }

    /// The step whose code `code` is for `factor`, newer than its last accepted one.
    private func step(of code: String, for factor: SecondFactorRecord) throws -> Int64 {
        let secret = try TOTPSecret(sealed: factor.sealedSecret, context: Self.sealContext(factorID: factor.id), masterKey: self.masterKey)
        guard let step = secret.matchingStep(code, at: self.clock.now()), step > (factor.lastStep ?? Int64.min) else {
            throw ServiceError.invalidSecondFactorCode
        }
        return step
    }

    /// A recovery code was used: audited, and the user's verified address is told (a security notice, never held back).
    private func recordRecoveryCodeUse(_ use: SecondFactorUse, userID: String) async {
        guard case .recoveryCode = use else { return }
        do {
            try await self.audit.record(.user(userID), AuditAction.mfaRecoveryCodeUse, target: "user \(userID)")
        } catch {
            self.logger.warning("could not audit a recovery code's use", metadata: ["user_id": "\(userID)", "error": "\(type(of: error))"])
        }
        await self.accounts.tellSignInChanged(
            userID: userID, "A recovery code was used to sign in to your account. If this was not you, change your password now.")
    }

    // MARK: Managing factors

    /// The user's factors (never a secret).
    package func factors(userID: String) async throws -> MFAFactorsResponse {
        MFAFactorsResponse(
            factors: try await self.store.secondFactors(ofUser: userID).map {
                MFAFactorsResponse.Factor(id: $0.id, type: $0.type, confirmed: $0.confirmedAt != nil, createdAt: $0.createdAt)
            })
    }

    /// Removes the token's user's factor `id` (a step-up first for a user with a confirmed factor).
    package func deleteFactor(id: String, token: VerifiedToken) async throws {
        try await self.sessions.requireStepUp(token)
        guard try await self.store.deleteFactor(id: id.lowercased(), userID: token.userID, at: self.clock.now()) else {
            throw ServiceError.notFound("This account has no factor with this ID.")
        }
        try await self.audit.record(.user(token.userID), AuditAction.mfaDisable, target: "user \(token.userID)", details: "totp \(id.lowercased())")
        await self.accounts.tellSignInChanged(userID: token.userID, "A second factor was removed from your account.")
    }

    /// A new set of recovery codes for the token's user, voiding the old (a step-up first).
    package func regenerateRecoveryCodes(token: VerifiedToken) async throws -> [String] {
        try await self.sessions.requireStepUp(token)
        let codes = RecoveryCode.generateSet()
        let salt = RecoveryCode.makeSalt()
        guard
            try await self.store.replaceRecoveryCodes(
                userID: token.userID, hashes: RecoveryCode.hashes(of: codes, salt: salt), salt: salt, at: self.clock.now())
        else { throw ServiceError.notFound("This account has no second factor: set one up with POST /api/v1/mfa/totp first.") }
        try await self.audit.record(.user(token.userID), AuditAction.mfaRecoveryCodesRegenerate, target: "user \(token.userID)")
        return codes
    }

    /// Support: removes every factor and recovery code of the user (sessions are kept); returns how many factors.
    package func reset(userID: String) async throws -> Int {
        try await self.store.resetSecondFactors(userID: userID, at: self.clock.now())
    }
}
