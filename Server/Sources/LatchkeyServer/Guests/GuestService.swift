import Foundation
import LatchkeyAPI

/// Guest sessions: a short-lived access token for a device, without registration or refresh token.
///
/// Nothing is stored. The token's `did` is the device UUID and its `sub` is `guest:<device UUID>`, which never
/// names a user (a device that registered has the bare UUID as its user ID, and a device UUID travels in headers
/// by design, so a guest token for it must not present its holder as that user); its `aud` is the guest audience.
/// It expires after `tokens.guest-lifetime` (900 s by default). A new call gives a new token.
package struct GuestService: Sendable {
    let tokens: AccessTokenIssuer
    let lifetime: TimeInterval
    let limitations: GuestLimitations

    /// A guest token for `deviceID` (canonical lowercase UUID).
    package func start(deviceID: String) async throws -> GuestSessionResponse {
        let (token, _) = try await self.tokens.issue(
            kind: .guest, subject: AccessTokenIssuer.guestSubject(deviceID: deviceID), sessionID: nil, deviceID: deviceID, lifetime: self.lifetime)
        return GuestSessionResponse(accessToken: token, expiresIn: Int(self.lifetime), limitations: self.limitations)
    }
}
