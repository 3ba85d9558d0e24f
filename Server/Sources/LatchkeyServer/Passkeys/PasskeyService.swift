import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyWebAuthn
import Logging

/// Passkeys (WebAuthn): adding one to a signed-in user, signing in with one, and the user's list of them.
///
/// Every ceremony starts with options carrying a fresh challenge, kept server-side by the SHA-256 of its `challenge_id`:
/// single use (taken, whatever the outcome, by the first request that names it), bound to its ceremony (and, for a
/// registration, to the session that asked), and dead after `passkeys.challenge-lifetime`. What the credential says is
/// checked by ``WebAuthn``; nothing of it (challenge, credential ID, key, signature, client data) is ever logged.
package struct PasskeyService: Sendable {
    let configuration: PasskeyConfiguration
    /// `passkeys.rp-name`, else `email.app-name`.
    let rpName: String
    let store: any PasskeyStore
    let sessions: SessionService
    let accounts: EmailAccountService
    let audit: AuditLog
    let clock: any WallClock
    let logger: Logger

    /// The COSE algorithms offered: ES256, EdDSA, RS256.
    static let algorithms = [-7, -8, -257]

    /// The relying party of the ceremonies; 404 `passkeys_disabled` while `passkeys.rp-id` is not set.
    func relyingParty() throws -> RelyingParty {
        guard let rpID = self.configuration.rpID else { throw ServiceError.passkeysDisabled }
        return RelyingParty(
            id: rpID, origins: self.configuration.allowedOrigins, userVerificationRequired: self.configuration.userVerification == .required)
    }

    // MARK: Registration

    /// Options to make a passkey for the token's user. Adding a way in needs a recent sign-in (or a DPoP proof with the
    /// session's key) and, for a user with a second factor, a recent step-up.
    package func registrationOptions(token: VerifiedToken, proof: VerifiedProof?) async throws -> PasskeyRegistrationOptionsResponse {
        let relyingParty = try self.relyingParty()
        try await self.sessions.requireRecentAuthentication(token, proof: proof)
        try await self.sessions.requireStepUp(token)
        guard let sessionID = token.sessionID, let handle = Self.userHandle(of: token.userID) else {
            throw ServiceError.forbidden("Only a signed-in user's own session can add a passkey.")
        }
        let name = try await self.accounts.account(userID: token.userID)?.email ?? token.userID
        let existing = try await self.store.passkeys(ofUser: token.userID)
        let (challengeID, challenge) = try await self.issueChallenge(.registration, userID: token.userID, sessionID: sessionID)
        let options = PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: relyingParty.id, name: self.rpName), user: .init(id: Base64URL.encode(handle), name: name, displayName: name),
            challenge: Base64URL.encode(challenge), pubKeyCredParams: Self.algorithms.map { .init(alg: $0) }, timeout: self.timeoutMilliseconds,
            excludeCredentials: existing.map {
                PublicKeyCredentialDescriptorJSON(id: Base64URL.encode($0.credentialID), transports: $0.transports.isEmpty ? nil : $0.transports)
            },
            authenticatorSelection: .init(userVerification: self.configuration.userVerification.rawValue))
        return PasskeyRegistrationOptionsResponse(challengeID: challengeID, options: options)
    }

    /// Verifies a new credential against the challenge the token's session asked for and stores it as a passkey of the
    /// token's user. The challenge is spent whatever the outcome.
    package func register(_ request: PasskeyRegistrationRequest, token: VerifiedToken) async throws -> PasskeyResponse {
        let relyingParty = try self.relyingParty()
        let name = try Self.passkeyName(request.name ?? "Passkey")
        let credential = try RegistrationCredential(request.credential)
        let challenge = try await self.takeChallenge(request.challengeID, ceremony: .registration)
        guard challenge.sessionID != nil, challenge.sessionID == token.sessionID, challenge.userID == token.userID else {
            throw ServiceError.invalidPasskey("This challenge was issued to another session: ask for new options with this session's Bearer.")
        }
        let verified: VerifiedRegistration
        do throws(WebAuthnFailure) {
            verified = try WebAuthn.verifyRegistration(
                clientDataJSON: credential.clientDataJSON, attestationObject: credential.attestationObject, challenge: challenge.challenge,
                relyingParty: relyingParty)
        } catch {
            throw ServiceError.invalidPasskey(error.detail)
        }
        guard verified.credentialID == credential.rawID else {
            throw ServiceError.invalidPasskey("credential.rawId is not the credential ID the authenticator attested.")
        }
        let now = self.clock.now()
        let passkey = PasskeyRecord(
            id: UUID().uuidString.lowercased(), userID: token.userID, credentialID: verified.credentialID, publicKey: verified.publicKey,
            algorithm: verified.algorithm, signCount: verified.signCount, backupEligible: verified.backupEligible, backedUp: verified.backedUp,
            aaguid: verified.aaguid, attestationFormat: verified.attestationFormat, transports: credential.transports, name: name, createdAt: now,
            lastUsedAt: nil)
        switch try await self.store.addPasskey(passkey) {
        case .added: break
        case .credentialExists: throw ServiceError.passkeyExists
        case .userGone: throw TokenRejection.revoked
        }
        try await self.audit.record(.user(token.userID), AuditAction.passkeyAdd, target: "user \(token.userID)", details: "passkey \(passkey.id)")
        await self.accounts.tellSignInChanged(userID: token.userID, "A passkey (\(name)) was added to your account: it now signs in too.")
        return passkey.response
    }

    // MARK: Managing passkeys

    /// The user's passkeys, oldest first.
    package func passkeys(userID: String) async throws -> PasskeyListResponse {
        _ = try self.relyingParty()
        return PasskeyListResponse(passkeys: try await self.store.passkeys(ofUser: userID).map(\.response))
    }

    /// Renames the user's passkey `id`.
    package func rename(id: String, to name: String, userID: String) async throws -> PasskeyResponse {
        _ = try self.relyingParty()
        let name = try Self.passkeyName(name)
        guard let passkey = try await self.store.renamePasskey(id: id.lowercased(), userID: userID, name: name) else {
            throw ServiceError.notFound("This account has no passkey with this ID.")
        }
        return passkey.response
    }

    /// Removes the token's user's passkey `id` (a recent sign-in, and a recent step-up for a user with a second factor).
    /// Sessions it started go on: removing a way in revokes nothing else.
    package func remove(id: String, token: VerifiedToken, proof: VerifiedProof?) async throws {
        _ = try self.relyingParty()
        try await self.sessions.requireRecentAuthentication(token, proof: proof)
        try await self.sessions.requireStepUp(token)
        try await self.remove(id: id, ofUser: token.userID, by: .user(token.userID))
        await self.accounts.tellSignInChanged(userID: token.userID, "A passkey was removed from your account.")
    }

    /// Support: removes the user's passkey `id` (passkeys on or off), audited with `actor`.
    package func remove(id: String, ofUser userID: String, by actor: AuditActor) async throws {
        guard try await self.store.deletePasskey(id: id.lowercased(), userID: userID, at: self.clock.now()) else {
            throw ServiceError.notFound("This account has no passkey with this ID.")
        }
        try await self.audit.record(actor, AuditAction.passkeyRemove, target: "user \(userID)", details: "passkey \(id.lowercased())")
    }

    // MARK: Challenges

    /// `passkeys.timeout` in milliseconds, as the options say it.
    var timeoutMilliseconds: Int { Int((self.configuration.timeout * 1000).rounded()) }

    /// Stores a new challenge for `ceremony`; returns its ID (for the client) and its 32 random bytes.
    func issueChallenge(_ ceremony: PasskeyCeremony, userID: String? = nil, sessionID: String? = nil) async throws -> (id: String, bytes: [UInt8]) {
        let id = Secret.generate()
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) }
        let now = self.clock.now()
        try await self.store.storeChallenge(
            PasskeyChallengeRecord(
                idHash: Secret.hash(id), ceremony: ceremony, challenge: bytes, userID: userID, sessionID: sessionID, createdAt: now,
                expiresAt: now.addingTimeInterval(self.configuration.challengeLifetime)))
        return (id, bytes)
    }

    /// Spends the challenge `id` names; 400 `invalid_passkey` unless it is live and of `ceremony`.
    func takeChallenge(_ id: String, ceremony: PasskeyCeremony) async throws -> PasskeyChallengeRecord {
        guard let challenge = try await self.store.takeChallenge(idHash: Secret.hash(id)), challenge.expiresAt > self.clock.now() else {
            throw ServiceError.invalidPasskey("This challenge_id is unknown, expired or used: ask for new options.")
        }
        guard challenge.ceremony == ceremony else {
            throw ServiceError.invalidPasskey("This challenge_id was issued for \(challenge.ceremony.rawValue), not \(ceremony.rawValue).")
        }
        return challenge
    }

    // MARK: Values

    /// The user handle of a user: their UUID's 16 bytes.
    static func userHandle(of userID: String) -> [UInt8]? {
        guard let uuid = UUID(uuidString: userID) else { return nil }
        return withUnsafeBytes(of: uuid.uuid) { [UInt8]($0) }
    }

    /// A passkey's name: trimmed, 1 to 64 characters, no control characters (400 `invalid_request` otherwise).
    static func passkeyName(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ServiceError.invalidRequest("A passkey's name must be 1 to 64 characters (no control characters).")
        }
        return name
    }
}
