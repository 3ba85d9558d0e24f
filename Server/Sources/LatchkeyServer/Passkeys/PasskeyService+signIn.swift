import Foundation
import LatchkeyAPI
import LatchkeyWebAuthn
import Logging

extension PasskeyService {
    /// Options for signing in with any passkey of this site: discoverable credentials, so `allowCredentials` is empty and the
    /// authenticator offers what it holds.
    package func authenticationOptions() async throws -> PasskeyAuthenticationOptionsResponse {
        let relyingParty = try self.relyingParty()
        let (challengeID, challenge) = try await self.issueChallenge(.authentication)
        return PasskeyAuthenticationOptionsResponse(
            challengeID: challengeID,
            options: PublicKeyCredentialRequestOptionsJSON(
                challenge: Base64URL.encode(challenge), timeout: self.timeoutMilliseconds, rpId: relyingParty.id,
                userVerification: self.configuration.userVerification.rawValue))
    }

    /// Verifies an assertion and starts a session for the passkey's user: `amr ["hwk", "user"]` at `aal2` when the
    /// authenticator verified the person (possession and inherence), else `amr ["hwk"]`, one factor, held back for a user
    /// with a second factor (403 `mfa_required`). The counter's compare-and-set, the device's joining (`deviceID`, a
    /// canonical UUID) and the session are one transaction; a DPoP proof binds the session (and a new device) to its key.
    package func signIn(_ request: PasskeyAuthenticationRequest, deviceID: String?, proof: VerifiedProof?) async throws -> TokenPairResponse {
        let relyingParty = try self.relyingParty()
        try self.sessions.checkProofPolicy(proof)
        let credential = try AssertionCredential(request.credential)
        let challenge = try await self.takeChallenge(request.challengeID, ceremony: .authentication)
        guard let passkey = try await self.store.passkey(credentialID: credential.rawID) else { throw ServiceError.unknownCredential }
        if let handle = credential.userHandle, handle != Self.userHandle(of: passkey.userID) {
            throw ServiceError.invalidPasskey("The assertion's userHandle is not the passkey's user.")
        }
        let verified = try await self.verify(credential, of: passkey, challenge: challenge.challenge, relyingParty: relyingParty)
        let now = self.clock.now()
        let (session, refreshToken, mfaToken) = self.sessions.makeSession(
            userID: passkey.userID, deviceID: deviceID, proof: proof, amr: verified.userVerified ? [.hardwareKey, .user] : [.hardwareKey],
            secondFactorGate: !verified.userVerified, aal2At: verified.userVerified ? now : nil)
        // A device new to the user that came without a key gets a secret, once, as at register-device.
        let deviceSecret = proof == nil ? Secret.generate() : nil
        let device = deviceID.map { id in
            DeviceRecord(
                id: id, userID: passkey.userID, secretHash: Secret.hash(deviceSecret ?? Secret.generate()), createdAt: now, lastSeenAt: now,
                keyThumbprint: proof?.thumbprint)
        }
        let use = PasskeyUse(
            passkeyID: passkey.id, storedSignCount: passkey.signCount, signCount: verified.signCount, backedUp: verified.backedUp, at: now)
        switch try await self.store.signIn(with: use, session: session, joining: device) {
        case .signedIn(let start, let newDevice):
            if start == .started {
                await self.record(.user(passkey.userID), AuditAction.passkeySignIn, userID: passkey.userID, passkeyID: passkey.id)
            }
            return try await self.sessions.answer(
                start, session: session, refreshToken: refreshToken, mfaToken: mfaToken, deviceSecret: newDevice ? deviceSecret : nil)
        case .counterChanged:
            throw ServiceError.invalidPasskey("Another sign-in with this passkey came first: sign in again.")
        case .passkeyGone: throw ServiceError.unknownCredential
        case .deviceClaimed: throw ServiceError.deviceIDClaimed
        case .deviceIDRetired: throw ServiceError.userDeleted
        }
    }

    /// The assertion checked with the passkey's key and counter; a counter that did not increase is refused and audited
    /// (a cloned authenticator), with the passkey's ID only.
    private func verify(
        _ credential: AssertionCredential, of passkey: PasskeyRecord, challenge: [UInt8], relyingParty: RelyingParty
    ) async throws -> VerifiedAssertion {
        do throws(WebAuthnFailure) {
            return try WebAuthn.verifyAssertion(
                clientDataJSON: credential.clientDataJSON, authenticatorData: credential.authenticatorData, signature: credential.signature,
                challenge: challenge, relyingParty: relyingParty, publicKey: passkey.publicKey, storedSignCount: passkey.signCount)
        } catch {
            if error.reason == .signCountNotIncreasing {
                self.logger.warning(
                    "passkey signature counter did not increase; refused (cloned authenticator?)",
                    metadata: ["user_id": "\(passkey.userID)", "passkey_id": "\(passkey.id)"])
                await self.record(.user(passkey.userID), AuditAction.passkeyCloneSuspected, userID: passkey.userID, passkeyID: passkey.id)
            }
            throw ServiceError.invalidPasskey(error.detail)
        }
    }

    /// Audits `action` on the user's passkey; a failure to write is logged, never the answer of what it records.
    private func record(_ actor: AuditActor, _ action: String, userID: String, passkeyID: String) async {
        do {
            try await self.audit.record(actor, action, target: "user \(userID)", details: "passkey \(passkeyID)")
        } catch {
            self.logger.warning("could not audit a passkey event", metadata: ["action": "\(action)", "error": "\(type(of: error))"])
        }
    }
}
