import Crypto
import Foundation
import LatchkeyAPI
import Logging

/// Starts sessions, rotates their refresh tokens and ends them.
///
/// A refresh token's successor is derived from it (HMAC with a key derived from the master key), so only hashes
/// are stored and a token presented again can be answered: while its successor was never used (the answer to its
/// first use was lost) it gets that same successor, at any time within the refresh lifetime; within the grace window
/// it gets the chain's newest token (concurrent refreshes of one app); later, once a descendant was used, it revokes
/// the whole session.
///
/// A session started with a DPoP proof is bound to the proof's key: each of its refreshes needs a proof made with
/// that key, so a refresh token copied off the device is worthless without the key.
package struct SessionService: Sendable {
    let store: any SessionStore
    let tokens: AccessTokenIssuer
    let policy: TokenPolicy
    /// `mfa.step-up-lifetime` and the other second-factor settings.
    let secondFactors: SecondFactorPolicy
    /// Successful refreshes per session (`limits.refresh`), counted in the rotation's own transaction.
    let refreshLimit: RateLimitPolicy
    let successorKey: SymmetricKey
    let clock: any WallClock
    let metrics: LatchkeyMetrics
    let logger: Logger
    /// The app's claims hook (`hooks.claims.url`), when one is set.
    var claimsHook: ClaimsHook? = nil
    /// Where a token's user is read when nothing read them while the session was written (a step-up).
    var claimsStore: SQLLatchkeyStore? = nil
    /// Where attested devices are looked up while App Attest is on: their sessions' tokens carry `att: true`.
    var attestations: (any AppAttestStore)? = nil

    /// A new gatherer of a session token's extra claims (``PendingClaims``).
    func pendingClaims() -> PendingClaims { PendingClaims(hook: self.claimsHook, store: self.claimsStore) }

    /// A session about to be stored, with the plaintext of its first refresh token. `amr` says how its user proved who
    /// they are; a device session bound to a key (`proof`) adds `hwk`. With `secondFactorGate` a one-factor sign-in
    /// carries a challenge, stored instead of the session when the user has a confirmed second factor (its `mfa_token`
    /// is returned beside): login, Apple, token exchange. Continuing a device's own session is never gated.
    func makeSession(
        userID: String, deviceID: String?, proof: VerifiedProof? = nil, accessCodeID: String? = nil, amr: [AuthenticationMethod],
        secondFactorGate: Bool = false, aal2At: Date? = nil
    )
        -> (session: NewSession, refreshToken: String, mfaToken: String?)
    {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = RefreshToken.make(sessionID: sessionID, secret: Secret.generate())
        let now = self.clock.now()
        var methods = amr
        if methods == [.device] && proof != nil { methods.append(.hardwareKey) }
        let mfaToken = secondFactorGate ? Secret.generate() : nil
        var session = NewSession(
            id: sessionID, userID: userID, deviceID: deviceID, createdAt: now, refreshTokenHash: Secret.hash(refreshToken),
            refreshTokenExpiresAt: now.addingTimeInterval(self.policy.refreshLifetime), proof: proof, accessCodeID: accessCodeID,
            amr: methods, aal2At: aal2At,
            challenge: mfaToken.map {
                NewSecondFactorChallenge(tokenHash: Secret.hash($0), expiresAt: now.addingTimeInterval(Self.challengeLifetime))
            })
        session.claims = self.pendingClaims()
        return (session, refreshToken, mfaToken)
    }

    /// How long an `mfa_token` lives: five minutes.
    static let challengeLifetime: TimeInterval = 300

    /// The response for a session (begun at `authTime`) whose current refresh token is `refreshToken`.
    func tokenPair(
        sessionID: String, userID: String, deviceID: String?, authTime: Date, refreshToken: String, deviceSecret: String? = nil,
        aal: AuthenticatorAssuranceLevel, amr: [AuthenticationMethod], claims: PendingClaims?
    ) async throws -> TokenPairResponse {
        let extra = try await (claims ?? self.pendingClaims()).claims(userID: userID, amr: amr)
        var attested = false
        if let attestations = self.attestations, let deviceID {
            // The device's key counts only for the user whose registration proved it (a guest's key proves nothing
            // about whoever registers that device UUID later).
            attested = try await attestations.attestedKey(deviceID: deviceID).map { $0.userID == userID } ?? false
        }
        let access = try await self.tokens.issue(
            kind: .session, subject: userID, sessionID: sessionID, deviceID: deviceID, lifetime: self.policy.sessionLifetime,
            authTime: authTime, aal: aal, amr: amr, attested: attested, extra: extra)
        return TokenPairResponse(
            accessToken: access.token, expiresIn: Int(self.policy.sessionLifetime), refreshToken: refreshToken,
            refreshTokenExpiresIn: Int(self.policy.refreshLifetime), userID: userID, sessionID: sessionID, deviceSecret: deviceSecret)
    }

    /// The response for the stored session `session` whose current refresh token is `refreshToken`.
    func tokenPair(_ session: SessionRecord, refreshToken: String, claims: PendingClaims? = nil) async throws -> TokenPairResponse {
        try await self.tokenPair(
            sessionID: session.id, userID: session.userID, deviceID: session.deviceID, authTime: session.createdAt, refreshToken: refreshToken,
            aal: session.aal, amr: Self.amr(of: session), claims: claims)
    }

    /// The `amr` of a stored session; one stored before sessions kept it is told by what it has.
    static func amr(of session: SessionRecord) -> [AuthenticationMethod] {
        if !session.amr.isEmpty { return session.amr }
        if session.accessCodeID != nil { return [.accessCode] }
        if session.deviceID != nil { return session.dpopThumbprint == nil ? [.device] : [.device, .hardwareKey] }
        return []
    }

    /// The token pair of a session just created from `session`.
    func tokenPair(_ session: NewSession, refreshToken: String, deviceSecret: String? = nil) async throws -> TokenPairResponse {
        try await self.tokenPair(
            sessionID: session.id, userID: session.userID, deviceID: session.deviceID, authTime: session.createdAt, refreshToken: refreshToken,
            deviceSecret: deviceSecret, aal: session.aal2At == nil ? .aal1 : .aal2, amr: session.amr, claims: session.claims)
    }

    /// The answer to a sign-in: its session's token pair, or — when a challenge was stored instead — the 403
    /// `mfa_required` carrying `mfaToken`.
    func answer(
        _ start: SessionStart, session: NewSession, refreshToken: String, mfaToken: String?, deviceSecret: String? = nil
    ) async throws -> TokenPairResponse {
        switch start {
        case .started: return try await self.tokenPair(session, refreshToken: refreshToken, deviceSecret: deviceSecret)
        case .challenged(let factors):
            guard let mfaToken else { throw StoreError.conflict }
            self.logger.info("sign-in needs a second factor", metadata: ["user_id": "\(session.userID)"])
            throw SecondFactorRequired(mfaToken: mfaToken, factors: factors)
        }
    }

    /// Starts a new session for an existing user, bound to `proof`'s key when one came.
    /// Starts a new session for an existing user, bound to `proof`'s key when one came. With `secondFactorGate` (a sign-in
    /// that proved one factor) a user with a confirmed second factor gets ``SecondFactorRequired`` instead.
    package func startSession(
        userID: String, deviceID: String?, proof: VerifiedProof?, accessCodeID: String? = nil, amr: [AuthenticationMethod],
        secondFactorGate: Bool = false
    ) async throws
        -> TokenPairResponse
    {
        try self.checkProofPolicy(proof)
        let (session, refreshToken, mfaToken) = self.makeSession(
            userID: userID, deviceID: deviceID, proof: proof, accessCodeID: accessCodeID, amr: amr, secondFactorGate: secondFactorGate)
        let start = try await self.store.createSession(session)
        return try await self.answer(start, session: session, refreshToken: refreshToken, mfaToken: mfaToken)
    }

    /// Refuses a sign-in without a proof when this server requires them (`tokens.dpop` `required`).
    func checkProofPolicy(_ proof: VerifiedProof?) throws {
        if proof == nil && self.policy.dpop == .required { throw DPoPRejection.required }
    }

    /// Spends `refreshToken` and returns the session's next token pair (`proof` is the request's DPoP proof), with where
    /// the session stands against `limits.refresh` afterwards (refreshes left in the window, and when its oldest leaves
    /// it). Over that limit: ``RateLimitExceeded``, nothing spent.
    package func refreshCounting(
        _ refreshToken: String, proof: VerifiedProof?
    ) async throws
        -> (tokens: TokenPairResponse, remaining: (count: Int, resetAt: Date)?)
    {
        guard let sessionID = RefreshToken.sessionID(of: refreshToken) else {
            throw ServiceError.invalidGrant("The refresh token is not valid: unknown, expired or revoked.")
        }
        let successor = self.successor(of: refreshToken, sessionID: sessionID)
        let now = self.clock.now()
        let limit =
            self.refreshLimit.isEnabled
            ? RefreshLimit(bucket: RateLimiter.bucket(self.refreshLimit, sessionID), limit: self.refreshLimit.limit, window: self.refreshLimit.window)
            : nil
        let claims = self.pendingClaims()
        let result = try await self.store.rotateRefreshToken(
            sessionID: sessionID, presentedHash: Secret.hash(refreshToken), successorHash: Secret.hash(successor),
            successorExpiresAt: now.addingTimeInterval(self.policy.refreshLifetime), now: now, graceWindow: self.policy.refreshGrace,
            proof: proof, requireProof: self.policy.dpop == .required, limit: limit, claims: claims)
        return (try await self.tokens(for: result.rotation, successor: successor, sessionID: sessionID, now: now, claims: claims), result.remaining)
    }

    private func tokens(
        for outcome: RefreshRotation, successor: String, sessionID: String, now: Date, claims: PendingClaims
    ) async throws -> TokenPairResponse {
        switch outcome {
        case .rotated(let session), .unclaimedSuccessor(let session):
            return try await self.tokenPair(session, refreshToken: successor, claims: claims)
        case .withinGrace(let session):
            let latest = try await self.latestDescendant(of: successor, sessionID: sessionID)
            return try await self.tokenPair(session, refreshToken: latest, claims: claims)
        case .userDisabled:
            throw ServiceError.userDisabled
        case .reuseDetected(let session):
            self.metrics.refreshTokenReuseDetected()
            self.logger.warning("refresh token reuse detected; session revoked", metadata: ["session_id": "\(session.id)"])
            throw ServiceError.invalidGrant("The refresh token was already used; the session has been revoked. Sign in again.")
        case .proofRequired(let session):
            self.metrics.refreshWithoutProof()
            self.logger.warning(
                "refresh token presented without its session's DPoP key; refused", metadata: ["session_id": "\(session.id)"])
            if session.dpopThumbprint == nil { throw DPoPRejection.required }
            throw ServiceError.invalidGrant(
                "This refresh token is bound to its device's key: the refresh needs a DPoP proof signed with that key.")
        case .limited(_, let resetAt):
            throw RateLimitExceeded(policy: self.refreshLimit, resetAt: resetAt, now: now)
        case .invalid:
            throw ServiceError.invalidGrant("The refresh token is not valid: unknown, expired or revoked.")
        }
    }

    /// Whether this server issued `refreshToken` (spent or not): one read, no rotation. A client whose address
    /// is over its failure limit is let through with such a token, reuse detection included.
    func issued(_ refreshToken: String) async throws -> Bool {
        guard let sessionID = RefreshToken.sessionID(of: refreshToken) else { return false }
        return try await self.store.isRefreshTokenSpent(sessionID: sessionID, hash: Secret.hash(refreshToken)) != nil
    }

    /// Ends the sessions `scope` names; returns how many were live.
    package func logout(_ token: VerifiedToken, scope: LogoutScope) async throws -> Int {
        // The route lets only a session's token through (RequireToken); a session's token always names its session.
        guard let sessionID = token.sessionID else {
            throw ServiceError.forbidden("Only a session's access token can log out; access codes are revoked with the CLI.")
        }
        let now = self.clock.now()
        let revoked: [String]
        switch scope {
        case .local:
            revoked = try await self.store.revokeSession(id: sessionID, reason: "logout", at: now) ? [sessionID] : []
        case .global:
            revoked = try await self.store.logOutEverywhere(userID: token.userID, at: now)
        case .others:
            revoked = try await self.store.revokeSessions(ofUser: token.userID, keeping: sessionID, reason: "logout_others", at: now)
        }
        return revoked.count
    }

    /// Ends every session of `userID` (support: `latchkey users revoke-sessions`); returns how many were live.
    package func revokeSessions(ofUser userID: String) async throws -> Int {
        let revoked = try await self.store.revokeSessions(ofUser: userID, keeping: nil, reason: "admin", at: self.clock.now())
        return revoked.count
    }

    /// Ends one session (support: the admin console); false when it was not live. Its tokens are refused at once here,
    /// and by other processes through the revocation feed; its event sockets hear `session.revoked` (`admin`).
    package func revokeSession(id: String) async throws -> Bool {
        try await self.store.revokeSession(id: id, reason: "admin", at: self.clock.now())
    }

    /// Whether `token` shows a recent sign-in: a session begun within `tokens.recent-authentication` seconds, or a
    /// fresh DPoP `proof` made with the key the session is bound to for this token (its `ath`, RFC 9449 §4.3), each
    /// proof once (its `jti` is spent here). Tokens of an identity provider count as recent (the provider decides how
    /// long its sign-ins last). A session exchanged from an access code never does, however
    /// new or bound: the code is a support credential, not a sign-in of the user, so it can add no way to sign in.
    func requireRecentAuthentication(_ token: VerifiedToken, proof: VerifiedProof?) async throws {
        switch token.kind {
        case .external: return
        case .session:
            guard let sessionID = token.sessionID, let session = try await self.store.session(id: sessionID), session.accessCodeID == nil
            else { throw ServiceError.reauthenticationRequired }
            if let authTime = token.claims.authTime,
                self.clock.now().timeIntervalSince1970 - TimeInterval(authTime) <= self.policy.recentAuthentication
            {
                return
            }
            if let proof, proof.provesAccessToken, session.dpopThumbprint == proof.thumbprint {
                try await self.store.spendProof(proof.asRecentAuthentication)
                return
            }
            throw ServiceError.reauthenticationRequired
        default:
            throw ServiceError.forbidden("Only the account's own session can do this; guest tokens and access codes cannot.")
        }
    }

    /// Refuses a sensitive action (403 `aal2_required`) of a user who has a confirmed second factor unless `token`'s
    /// session proved one within `mfa.step-up-lifetime`. Users without a factor pass.
    func requireStepUp(_ token: VerifiedToken) async throws {
        guard try await self.store.hasConfirmedSecondFactor(userID: token.userID) else { return }
        if token.kind == .session, let sessionID = token.sessionID, let session = try await self.store.session(id: sessionID),
            let aal2At = session.aal2At, self.clock.now().timeIntervalSince(aal2At) <= self.secondFactors.stepUpLifetime
        {
            return
        }
        throw ServiceError.aal2Required
    }

    /// The newest refresh token of the chain starting at `token`: the one a racing client that lost
    /// should continue with, so its late answer does not hand it a token already spent.
    func latestDescendant(of token: String, sessionID: String) async throws -> String {
        var current = token
        for _ in 0..<8 {
            guard try await self.store.isRefreshTokenSpent(sessionID: sessionID, hash: Secret.hash(current)) == true else { return current }
            current = self.successor(of: current, sessionID: sessionID)
        }
        return current
    }

    func successor(of refreshToken: String, sessionID: String) -> String {
        let secret = Data(HMAC<SHA256>.authenticationCode(for: Data(refreshToken.utf8), using: self.successorKey)).base64URLEncodedString()
        return RefreshToken.make(sessionID: sessionID, secret: secret)
    }
}

/// The refresh-token format: `<session id>.<256-bit secret>`.
///
/// The session ID (not secret: access tokens carry it as `sid`) keys the lookup, so a session's refresh
/// tokens sit together in one B-tree and a rotation writes one page.
enum RefreshToken {
    static func make(sessionID: String, secret: String) -> String { sessionID + "." + secret }

    /// The session ID of a well-formed refresh token.
    static func sessionID(of token: String) -> String? {
        guard let dot = token.utf8.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        return UUID.canonical(String(token[..<dot]))
    }
}
