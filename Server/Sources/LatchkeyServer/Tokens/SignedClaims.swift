import JWTKit
import LatchkeyAPI

/// ``AccessTokenClaims`` as a jwt-kit payload.
///
/// `verify(using:)` checks nothing: jwt-kit would read the system clock, so the time and audience
/// checks happen in ``AccessTokenVerifier`` against the injected clock.
struct SignedClaims: JWTPayload {
    var claims: AccessTokenClaims

    init(_ claims: AccessTokenClaims) { self.claims = claims }
    init(from decoder: any Decoder) throws { self.claims = try AccessTokenClaims(from: decoder) }
    func encode(to encoder: any Encoder) throws { try self.claims.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
