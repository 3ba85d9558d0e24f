import Foundation
import LatchkeyAPI

/// Mints Latchkey access tokens (sessions, guests, access codes) with the active signing key.
///
/// Every token carries the RFC 9068 header `typ: at+jwt`. Guest tokens are told apart by a standard claim too:
/// their `aud` is the guest audience (`<audience>:guest` by default), so a backend that verifies Latchkey tokens
/// with a stock JWT library and the usual audience refuses guests unless it names the guest audience as well.
package struct AccessTokenIssuer: Sendable {
    let keyRing: SigningKeyRing
    let issuer: String
    let audience: String
    let guestAudience: String
    let clock: any WallClock
    let metrics: LatchkeyMetrics

    /// The subject of a guest token for `deviceID`: never a user's ID (those are bare UUIDs).
    static func guestSubject(deviceID: String) -> String { "guest:" + deviceID }

    /// The `aud` a token of `kind` carries.
    func audience(for kind: TokenKind) -> String { kind == .guest ? self.guestAudience : self.audience }

    /// Signs a token for `subject` that expires after `lifetime`; `authTime` is when the session's user authenticated,
    /// `aal` and `amr` how strongly and how (sessions only); `extra` claims (`app_metadata`, a claims hook's) are merged
    /// into the payload. `attested`: the token's device is attested with App Attest (the claim `att: true`).
    func issue(
        kind: TokenKind, subject: String, sessionID: String?, deviceID: String?, lifetime: TimeInterval, authTime: Date? = nil,
        aal: AuthenticatorAssuranceLevel? = nil, amr: [AuthenticationMethod]? = nil, tokenID: String = UUID().uuidString.lowercased(),
        attested: Bool = false, extra: [String: JSONValue] = [:]
    ) async throws -> (token: String, claims: AccessTokenClaims) {
        let now = Int64(self.clock.now().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            issuer: self.issuer, audience: self.audience(for: kind), subject: subject, sessionID: sessionID, issuedAt: now,
            notBefore: now, expiresAt: now + Int64(lifetime), tokenID: tokenID, kind: kind, deviceID: deviceID,
            authTime: authTime.map { Int64($0.timeIntervalSince1970) }, aal: aal, amr: amr, attested: attested ? true : nil)
        let token = try await self.keyRing.sign(SignedClaims(claims, extra: extra))
        self.metrics.tokenIssued(kind: kind)
        return (token, claims)
    }
}
