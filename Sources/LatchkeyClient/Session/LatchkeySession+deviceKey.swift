import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// The device key proofs are made with: the stored one, or a new one stored before it is first used (so a lost
    /// answer never leaves the server knowing a key the app forgot). Nil when ``Configuration/usesDeviceKey`` is off.
    func deviceKeyForProofs() throws -> DeviceKey? {
        guard self.configuration.usesDeviceKey else { return nil }
        var credentials = try self.loadCredentials()
        if let key = credentials.deviceKey { return key }
        let key = DeviceKey.generate()
        credentials.deviceKey = key
        try self.persist(credentials)
        return key
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
                key: key, method: request.method, url: request.url, nonce: self.dpopNonce, now: self.clock.now())
            let response = try await self.perform(attempt)
            let code = (try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body))?.error.code
            guard !retry, response.status == 400, code == .useDPoPNonce, response.header(DPoPProof.nonceHeader) != nil else { return response }
        }
        throw LatchkeyError.invalidResponse  // not reached: the second attempt always returns
    }

    /// Starts a new device identity: a new device UUID and key, no secret. The session ends; the old identity is
    /// not used again. The SDK does this by itself when the server says the device UUID is not this install's to use
    /// (claimed through `users/register`, or its account deleted), and after ``deleteAccount()`` of this device's own
    /// account.
    public func resetDeviceIdentity() throws {
        try self.replaceDeviceIdentity(.requested)
    }

    func replaceDeviceIdentity(_ reason: DeviceIdentityChange) throws {
        self.startNewGeneration()
        let fresh = StoredCredentials(deviceID: UUID(), deviceKey: self.configuration.usesDeviceKey ? DeviceKey.generate() : nil)
        try self.persist(fresh)
        self.defaults.set(fresh.deviceID.uuidString, forKey: self.configuration.deviceIDDefaultsKey)
        self.emit(.deviceIdentityReplaced(reason))
        self.setState(.signedOut)
    }
}
