import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyAppAttest
import Logging

/// App Attest for device sign-up and guests: challenges, attestations (or debug tokens) and assertions, under
/// `app-attest.policy`.
///
/// Every failure throws an ``AppAttestRefusal`` before anything is stored; under `report` a failing `app_attest` is
/// downgraded instead (the device stays unattested, a warning and `latchkey_app_attest_downgrades_total`). Attempts are
/// limited per key ID and per client (`limits.app-attest`; assertions per client only), never globally.
package struct AppAttestService: Sendable {
    package let configuration: AppAttestConfiguration
    let verifier: AppAttestVerifier
    let store: any AppAttestStore
    let limiter: RateLimiter
    let audit: AuditLog
    let clock: any WallClock
    let metrics: LatchkeyMetrics
    let logger: Logger

    /// The route an attested device's assertion covers (the request path, no host, no query).
    static let guestPath = "/api/v1/auth/guest"

    /// How long a challenge may be used: five minutes.
    static let challengeLifetime: TimeInterval = 300

    /// A single-use challenge: 32 random bytes, standard base64, kept by their SHA-256 until used or expired.
    package func challenge() async throws -> AppAttestChallengeResponse {
        guard self.configuration.isEnabled || !self.configuration.appIDs.isEmpty else { throw AppAttestRefusal.disabled }
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        try await self.store.storeChallenge(
            idHash: SHA256.hash(data: bytes).hexString, expiresAt: self.clock.now().addingTimeInterval(Self.challengeLifetime))
        return AppAttestChallengeResponse(challenge: AppAttestBase64.encode(bytes))
    }

    /// What `register-device` stores with its session: the verified key of `evidence`, nil when there is none (or it was
    /// downgraded under `report`); under `required` a device that is not attested yet must bring one.
    package func registration(_ evidence: AppAttestEvidence?, deviceID: String, client: String) async throws -> AppAttestKeyRecord? {
        guard self.configuration.isEnabled else { return nil }
        if let evidence {
            return try await self.reporting {
                let key = try await self.verify(evidence, deviceID: deviceID, client: client)
                // Checked again where it is stored (the sign-in's transaction); here so that `report` can downgrade it.
                if let owner = try await self.store.deviceID(attestedWith: key.keyID), owner != deviceID { throw AppAttestKeyInUse() }
                return key
            }
        }
        // Already attested means a key a registration proved (the device's own user, whose device secret the
        // registration checks); a key a guest request stored proves nothing about who registers the UUID.
        if self.configuration.policy == .required, try await self.store.attestedKey(deviceID: deviceID)?.userID == nil {
            throw AppAttestRefusal.required("This server registers attested devices only: send app_attest (App Attest) with the registration.")
        }
        return nil
    }

    /// Whether the guest token for `deviceID` is an attested device's. An attested device proves itself with an assertion
    /// over this request (`assertion`, `challenge`: the headers; `body`: the bytes received), or its debug token again.
    package func guest(
        _ evidence: AppAttestEvidence?, deviceID: String, assertion: String?, challenge: String?, body: [UInt8], client: String
    ) async throws -> Bool {
        guard self.configuration.isEnabled else { return false }
        // An attested device proves possession of its key on every guest request; a new attestation does not replace it
        // here (a device UUID is not a secret: anyone with a genuine attestation of their own could re-bind it).
        if let existing = try await self.store.attestedKey(deviceID: deviceID) {
            if existing.method == .debugToken {
                try await self.checkDebugToken(evidence?.debugToken, key: existing)
            } else {
                try await self.checkAssertion(assertion, challenge: challenge, body: body, key: existing, client: client)
            }
            return true
        }
        if let evidence,
            try await self.reporting({
                let key = try await self.verify(evidence, deviceID: deviceID, client: client)
                try await self.store.storeAttestedKey(key)
                return key
            }) != nil
        {
            return true
        }
        switch self.configuration.policy {
        case .off, .report: return false
        case .guests where self.configuration.unattestedGuestLimit != nil: return false
        case .guests, .required:
            throw AppAttestRefusal.required("Guest tokens are for attested devices only: send app_attest (App Attest) in the body.")
        }
    }

    /// Under `report`, a refusal becomes nil (the device stays unattested), logged and counted.
    private func reporting(_ body: () async throws -> AppAttestKeyRecord) async throws -> AppAttestKeyRecord? {
        guard self.configuration.policy == .report else { return try await body() }
        do { return try await body() } catch let refusal as AppAttestRefusal {
            self.downgrade(refusal.message)
        } catch is AppAttestKeyInUse {
            self.downgrade("key attested for another device")
        } catch is RateLimitExceeded {
            self.downgrade("limits.app-attest reached")
        }
        return nil
    }

    private func downgrade(_ reason: String) {
        self.metrics.appAttestDowngraded()
        self.logger.warning("app_attest did not verify; the device stays unattested (app-attest.policy report)", metadata: ["reason": "\(reason)"])
    }

    /// The key `evidence` attests for `deviceID`, verified; nothing is stored here.
    func verify(_ evidence: AppAttestEvidence, deviceID: String, client: String) async throws -> AppAttestKeyRecord {
        if let token = evidence.debugToken { return try await self.verify(debugToken: token, deviceID: deviceID) }
        guard let keyIDText = evidence.keyID, let objectText = evidence.attestationObject, let challengeText = evidence.challenge else {
            throw AppAttestRefusal.malformed("app_attest needs key_id, attestation_object and challenge (or debug_token).")
        }
        guard let keyID = AppAttestBase64.decode(keyIDText), let object = AppAttestBase64.decode(objectText) else {
            throw AppAttestRefusal.malformed("app_attest.key_id and app_attest.attestation_object must be base64.")
        }
        try await self.limit(keyID: keyID, client: client)
        let challenge = try await self.spend(challengeText)
        let key: AttestedKey
        do {
            key = try await self.verifier.verifyAttestation(
                keyID: keyID, attestationObject: object, clientDataHash: Array(SHA256.hash(data: challenge)), at: self.clock.now())
        } catch {
            throw AppAttestRefusal.attestation("The App Attest attestation did not verify (\(error.reason.rawValue)): \(error.detail)")
        }
        return AppAttestKeyRecord(
            deviceID: deviceID, keyID: AppAttestBase64.encode(key.keyID), publicKey: key.publicKey, counter: key.counter,
            receipt: key.receipt, appID: key.appID, method: .attestation, debugTokenID: nil, attestedAt: self.clock.now())
    }

    private func verify(debugToken: String, deviceID: String) async throws -> AppAttestKeyRecord {
        guard self.configuration.allowDebugTokens else {
            throw AppAttestRefusal.attestation("Debug tokens are off on this server (app-attest.allow-debug-tokens).")
        }
        let now = self.clock.now()
        guard let token = try await self.store.useDebugToken(hash: Secret.hash(debugToken), at: now) else {
            throw AppAttestRefusal.attestation("The debug token is unknown or revoked.")
        }
        try await self.audit.record(
            AuditActor(name: "device:\(deviceID)", source: "api"), AuditAction.appAttestDebugTokenUse, target: "device \(deviceID)",
            details: "debug token \(token.id) (\(token.name))")
        return AppAttestKeyRecord(
            deviceID: deviceID, keyID: "debug-token:" + deviceID, publicKey: nil, counter: 0, receipt: nil, appID: nil, method: .debugToken,
            debugTokenID: token.id, attestedAt: now)
    }

    /// Checks a debug-token device's proof on a guest request: the debug token that attested it, again.
    private func checkDebugToken(_ token: String?, key: AppAttestKeyRecord) async throws {
        guard let token else {
            throw AppAttestRefusal.assertion("This device was attested with a debug token: send app_attest.debug_token again.")
        }
        let record: AppAttestKeyRecord
        do {
            record = try await self.verify(debugToken: token, deviceID: key.deviceID)
        } catch {
            throw AppAttestRefusal.assertion("This device was attested with another debug token, or its token was revoked.")
        }
        guard record.debugTokenID == key.debugTokenID else {
            throw AppAttestRefusal.assertion("This device was attested with another debug token, or its token was revoked.")
        }
    }

    /// Checks an attested device's proof on a guest request: its assertion over this request, counter advanced atomically.
    private func checkAssertion(_ assertion: String?, challenge: String?, body: [UInt8], key: AppAttestKeyRecord, client: String) async throws {
        guard key.method == .attestation, let publicKey = key.publicKey, let appID = key.appID else {
            throw AppAttestRefusal.assertion("This device was attested with a debug token: send app_attest.debug_token again.")
        }
        guard let assertion, let challenge else {
            throw AppAttestRefusal.assertion(
                "This device is attested: send an App Attest assertion in X-App-Attest-Assertion over a fresh X-App-Attest-Challenge.")
        }
        guard let assertionBytes = AppAttestBase64.decode(assertion) else {
            throw AppAttestRefusal.assertion("X-App-Attest-Assertion is not base64.")
        }
        // Per client only: the device's key ID is known to anyone who knows its UUID, so counting assertions against it
        // would let strangers' junk assertions lock the device out.
        try await self.limit(keyID: nil, client: client)
        let challengeBytes = try await self.spend(challenge)
        let clientDataHash = AppAttestVerifier.assertionClientDataHash(
            method: "POST", path: Self.guestPath, body: body, challenge: challengeBytes)
        let counter: UInt32
        do {
            counter = try self.verifier.verifyAssertion(
                assertionBytes, clientDataHash: clientDataHash, publicKey: publicKey, appID: appID, storedCounter: key.counter)
        } catch {
            throw AppAttestRefusal.assertion("The App Attest assertion did not verify (\(error.reason.rawValue)): \(error.detail)")
        }
        guard try await self.store.advanceCounter(deviceID: key.deviceID, to: counter) else {
            throw AppAttestRefusal.assertion("The App Attest assertion's counter was used already.")
        }
    }

    /// Takes the challenge (any use spends it); its 32 bytes.
    private func spend(_ text: String) async throws -> [UInt8] {
        guard let bytes = AppAttestBase64.decode(text) else { throw AppAttestRefusal.malformed("The App Attest challenge must be base64.") }
        guard let expiresAt = try await self.store.takeChallenge(idHash: SHA256.hash(data: bytes).hexString), expiresAt > self.clock.now() else {
            throw AppAttestRefusal.challenge
        }
        return bytes
    }

    /// Counts one attempt against `limits.app-attest` for the key ID (an attestation's, the caller's own) and for the client.
    private func limit(keyID: [UInt8]?, client: String) async throws {
        let policy = self.configuration.limit
        for key in [keyID.map { "key:" + $0.hexString }, "client:" + client].compactMap(\.self) {
            if case .denied(let resetAt) = try await self.limiter.hit(policy, key: key) {
                throw RateLimitExceeded(policy: policy, resetAt: resetAt, now: self.clock.now())
            }
        }
    }
}
