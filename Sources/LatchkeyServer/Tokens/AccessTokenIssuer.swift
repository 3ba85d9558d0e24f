import Foundation
import LatchkeyAPI

/// Mints Latchkey access tokens (sessions, guests, access codes) with the active signing key.
@available(LatchkeyServer 1.0, *)
public struct AccessTokenIssuer: Sendable {
    let keyRing: SigningKeyRing
    let issuer: String
    let audience: String
    let clock: any WallClock
    let metrics: LatchkeyMetrics

    /// Signs a token for `userID` that expires after `lifetime`.
    func issue(
        kind: TokenKind, userID: String, sessionID: String?, deviceID: String?, lifetime: TimeInterval,
        tokenID: String = UUID().uuidString.lowercased()
    ) async throws -> (token: String, claims: AccessTokenClaims) {
        let now = Int64(self.clock.now().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            issuer: self.issuer, audience: self.audience, subject: userID, sessionID: sessionID, issuedAt: now, notBefore: now,
            expiresAt: now + Int64(lifetime), tokenID: tokenID, kind: kind, deviceID: deviceID)
        let token = try await self.keyRing.sign(SignedClaims(claims))
        self.metrics.tokenIssued(kind: kind)
        return (token, claims)
    }
}
