import Foundation
import LatchkeyAPI

/// Registers devices: a device's user ID is its UUID, and a known device needs its secret.
@available(LatchkeyServer 1.0, *)
public struct DeviceService: Sendable {
    let store: any DeviceStore
    let sessions: SessionService
    let clock: any WallClock

    /// Registers `deviceID` (canonical lowercase UUID) and starts a session for it.
    ///
    /// A new device gets a `device_secret` in the response, once. A known device must present it:
    /// the UUID travels in `X-Device-ID` headers, so knowing it must never be enough to get tokens.
    /// Returns whether the device was created by this call.
    public func register(deviceID: String, deviceSecret: String?) async throws -> (tokens: TokenPairResponse, created: Bool) {
        // Try to create first: a new device (the common case) then costs one transaction and no lookup.
        let secret = Secret.generate()
        let now = self.clock.now()
        let device = DeviceRecord(id: deviceID, userID: deviceID, secretHash: Secret.hash(secret), createdAt: now, lastSeenAt: now)
        let (session, refreshToken) = self.sessions.makeSession(userID: deviceID, deviceID: deviceID)
        do {
            try await self.store.registerNewDevice(device, session: session)
        } catch StoreError.conflict {
            // The device is known, or its ID belongs to a user from users/register (which has no secret).
            guard let existing = try await self.store.device(id: deviceID), let deviceSecret,
                Secret.constantTimeEquals(Secret.hash(deviceSecret), existing.secretHash)
            else { throw ServiceError.invalidDeviceSecret }
            return (try await self.sessions.startSession(userID: existing.userID, deviceID: deviceID), false)
        }
        let tokens = try await self.sessions.tokenPair(
            sessionID: session.id, userID: deviceID, deviceID: deviceID, refreshToken: refreshToken, deviceSecret: secret)
        return (tokens, true)
    }
}
