import Foundation
import LatchkeyAPI

/// Guest sessions: a short-lived access token for a device, without registration or refresh token.
///
/// Nothing is stored: the token's `sub` and `did` are the device UUID, and it expires after
/// `tokens.guest-lifetime` (900 s by default). A new call gives a new token.
@available(LatchkeyServer 1.0, *)
public struct GuestService: Sendable {
    let tokens: AccessTokenIssuer
    let lifetime: TimeInterval
    let limitations: GuestLimitations

    /// A guest token for `deviceID` (canonical lowercase UUID).
    public func start(deviceID: String) async throws -> GuestSessionResponse {
        let (token, _) = try await self.tokens.issue(kind: .guest, userID: deviceID, sessionID: nil, deviceID: deviceID, lifetime: self.lifetime)
        return GuestSessionResponse(accessToken: token, expiresIn: Int(self.lifetime), limitations: self.limitations)
    }
}
