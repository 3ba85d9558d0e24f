import Foundation
import LatchkeyAPI

/// Registers devices: a device's user ID is its UUID, and a known device must prove it is that device.
///
/// A device that registers with a DPoP proof is bound to the proof's key: registering it again needs a proof made
/// with that key (over a fresh server nonce), so no secret ever travels, and its sessions are bound to the key too.
/// A device that registers without one (an older app, curl) gets a `device_secret` once, and must present it.
package struct DeviceService: Sendable {
    let store: any DeviceStore
    let sessions: SessionService
    let clock: any WallClock
    /// App Attest: an `app_attest` is verified under `app-attest.policy` and its key stored with the session.
    var appAttest: AppAttestService? = nil

    /// Registers `deviceID` (canonical lowercase UUID) and starts a session for it; returns whether the device was
    /// created by this call.
    ///
    /// The device UUID travels in `X-Device-ID` headers, so knowing it must never be enough to get tokens: a known
    /// device needs a proof with its key or, when it has none, its secret. A UUID claimed through `users/register`
    /// (which signs in with access codes) is 409 `device_id_claimed`, a deleted user's is 409 `user_deleted`: the app
    /// should start a new device identity.
    ///
    /// `evidence` (`app_attest`) is verified under `app-attest.policy` before anything is written (`client` names the
    /// caller for `limits.app-attest`); its key is stored in the session's transaction.
    package func register(
        deviceID: String, deviceSecret: String?, proof: VerifiedProof?, evidence: AppAttestEvidence? = nil, client: String = ""
    ) async throws
        -> (tokens: TokenPairResponse, created: Bool)
    {
        try self.sessions.checkProofPolicy(proof)
        let attestation = try await self.appAttest?.registration(evidence, deviceID: deviceID, client: client)
        // Try to create first: a new device (the common case) then costs one transaction and no lookup.
        let secret = proof == nil ? Secret.generate() : nil
        let now = self.clock.now()
        let device = DeviceRecord(
            id: deviceID, userID: deviceID, secretHash: Secret.hash(secret ?? Secret.generate()), createdAt: now, lastSeenAt: now,
            keyThumbprint: proof?.thumbprint)
        let made = self.sessions.makeSession(userID: deviceID, deviceID: deviceID, proof: proof, amr: [.device])
        var session = made.session
        let refreshToken = made.refreshToken
        session.attestation = attestation
        switch try await self.store.registerNewDevice(device, session: session) {
        case .created:
            return (try await self.sessions.tokenPair(session, refreshToken: refreshToken, deviceSecret: secret), true)
        case .deletedID:
            throw ServiceError.userDeleted
        case .exists:
            guard let existing = try await self.store.device(id: deviceID) else { throw ServiceError.deviceIDClaimed }
            if let key = existing.keyThumbprint {
                guard proof?.thumbprint == key else { throw ServiceError.invalidDeviceSecret }
            } else {
                guard let deviceSecret, Secret.constantTimeEquals(Secret.hash(deviceSecret), existing.secretHash) else {
                    throw ServiceError.invalidDeviceSecret
                }
            }
            let remade = self.sessions.makeSession(userID: existing.userID, deviceID: deviceID, proof: proof, amr: [.device])
            var session = remade.session
            let refreshToken = remade.refreshToken
            session.attestation = attestation
            // A secret `logout global` doomed is replaced now: this answer carries the new one, and the old one dies.
            let next = Secret.generate()
            let secret = existing.keyThumbprint == nil && proof == nil ? (presented: existing.secretHash, next: Secret.hash(next)) : nil
            switch try await self.store.signInDevice(deviceID, session: session, secret: secret) {
            case .secretChanged: throw ServiceError.invalidDeviceSecret
            case .secretRotated: return (try await self.sessions.tokenPair(session, refreshToken: refreshToken, deviceSecret: next), false)
            case .signedIn: return (try await self.sessions.tokenPair(session, refreshToken: refreshToken), false)
            }
        }
    }

    /// Support: gives the device a new secret (returned once, as at first registration), forgets its key and ends its
    /// sessions; the device then signs in with the new secret only.
    package func reset(deviceID: String) async throws -> (deviceSecret: String, revokedSessions: Int) {
        let secret = Secret.generate()
        guard let revoked = try await self.store.resetDevice(id: deviceID, secretHash: Secret.hash(secret), at: self.clock.now()) else {
            throw ServiceError.notFound("No device with ID \(deviceID).")
        }
        return (secret, revoked.count)
    }
}
