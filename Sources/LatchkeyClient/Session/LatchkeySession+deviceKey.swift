import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// The device key proofs are made with: the stored one, or a new one stored before it is first used (so a lost
    /// answer never leaves the server knowing a key the app forgot). Nil when ``Configuration/usesDeviceKey`` is off.
    func deviceKeyForProofs() throws -> DeviceKey? {
        guard self.configuration.usesDeviceKey else { return nil }
        let credentials = try self.loadCredentials()
        if let key = credentials.deviceKey { return key }
        let key = DeviceKey.generate()
        // Another process of this install may have made the key meanwhile: use that one, never a second.
        let result = try self.commit(keepingOnFailure: false, expecting: { $0?.deviceID != credentials.deviceID || $0?.deviceKey == nil }) {
            $0.deviceKey = key
        }
        switch result {
        case .committed: return key
        case .conflict(let stored):
            self.credentials?.deviceKey = stored?.deviceKey
            return stored?.deviceKey
        }
    }

    /// The nonce the server handed out last (`DPoP-Nonce`), for the next proof. Kept beside the device UUID (it is no
    /// secret), so the first refresh after a relaunch needs no extra round trip while the nonce is current.
    var dpopNonce: String? {
        get { self.defaults.string(forKey: self.configuration.deviceIDDefaultsKey + ".dpop-nonce") }
        set {
            guard let newValue, newValue != self.dpopNonce else { return }
            self.defaults.set(newValue, forKey: self.configuration.deviceIDDefaultsKey + ".dpop-nonce")
        }
    }

    /// Sends `request` with a DPoP proof of the device key (when it has one); when the server asks for its nonce
    /// (400 `use_dpop_nonce`), sends it once more with a new proof carrying that nonce.
    func performProving(_ request: TransportRequest) async throws -> TransportResponse {
        guard let key = try self.deviceKeyForProofs() else { return try await self.perform(request) }
        var attempt = request
        for retry in [false, true] {
            attempt.headers[DPoPProof.header] = try DPoPProof.make(
                key: key, method: request.method, url: request.url, nonce: self.dpopNonce, accessToken: DPoPProof.accessToken(of: attempt),
                now: self.clock.now())
            let response = try await self.perform(attempt)
            let code = (try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body))?.error.code
            guard !retry, response.status == 400, code == .useDPoPNonce, response.header(DPoPProof.nonceHeader) != nil else { return response }
        }
        throw LatchkeyError.invalidResponse  // not reached: the second attempt always returns
    }

    /// Starts a new device identity: a new device UUID and key, no secret. The session ends; the old identity is
    /// not used again. The SDK does this by itself when the server says the device UUID is not this install's to use
    /// (claimed through `users/register`, or its account deleted), and after ``deleteAccount()`` of this device's own
    /// account, and on a phone restored from a backup (see ``Configuration/restoredDevicePolicy``). Stored credentials that
    /// cannot be read are replaced too: the SDK reports them (``AuthState/storeUnavailable(_:)``) but never replaces them by
    /// itself.
    public func resetDeviceIdentity() throws {
        try self.replaceDeviceIdentity(.requested)
    }

    func replaceDeviceIdentity(_ reason: DeviceIdentityChange, signOutReason: SignOutReason = .deviceIdentityReplaced) throws {
        let hadSession = self.credentials?.session != nil
        self.startNewGeneration()
        let fresh = StoredCredentials(deviceID: UUID(), deviceKey: self.configuration.usesDeviceKey ? DeviceKey.generate() : nil)
        // A plain save: this replaces whatever is stored, unreadable bytes included (the app asked, or the server said so).
        do { try self.secureStore.save(fresh) } catch let error as SecureStoreError { throw error.latchkeyError }
        self.announceStoreChange()
        self.credentials = fresh
        self.hasUnsavedCredentials = false
        self.defaults.set(fresh.deviceID.uuidString, forKey: self.configuration.deviceIDDefaultsKey)
        self.emit(.deviceIdentityReplaced(reason))
        if hadSession { self.emit(.signedOut(signOutReason)) }
        self.setState(.signedOut(reason: hadSession ? signOutReason : nil))
    }
}
