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
    /// App Attest: who may have a guest token under `app-attest.policy`, and whose carries `att: true`.
    var appAttest: AppAttestService? = nil

    /// A guest token for `deviceID` (canonical lowercase UUID). With App Attest on, `evidence` (the body's `app_attest`)
    /// attests the device, and an attested device proves itself with `assertion` over `challenge` (the headers) and the
    /// body's bytes; `client` names the caller for `limits.app-attest`.
    package func start(
        deviceID: String, evidence: AppAttestEvidence? = nil, assertion: String? = nil, challenge: String? = nil, body: [UInt8] = [],
        client: String = ""
    ) async throws -> GuestSessionResponse {
        let attested =
            try await self.appAttest?.guest(evidence, deviceID: deviceID, assertion: assertion, challenge: challenge, body: body, client: client)
            ?? false
        let (token, _) = try await self.tokens.issue(
            kind: .guest, subject: AccessTokenIssuer.guestSubject(deviceID: deviceID), sessionID: nil, deviceID: deviceID, lifetime: self.lifetime,
            attested: attested)
        return GuestSessionResponse(accessToken: token, expiresIn: Int(self.lifetime), limitations: self.limitations)
    }
}
