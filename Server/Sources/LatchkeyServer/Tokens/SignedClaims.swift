import JWTKit
import LatchkeyAPI

/// ``AccessTokenClaims`` as a jwt-kit payload, with the claims beyond the fixed ones (`app_metadata`, a claims hook's)
/// as `extra`: merged into the same JSON object when signed.
///
/// `verify(using:)` checks nothing: jwt-kit would read the system clock, so the time and audience
/// checks happen in ``AccessTokenVerifier`` against the injected clock.
struct SignedClaims: JWTPayload {
    var claims: AccessTokenClaims
    /// Claims named apart from every fixed one (``TokenClaims/reserved``).
    var extra: [String: JSONValue] = [:]

    init(_ claims: AccessTokenClaims, extra: [String: JSONValue] = [:]) {
        self.claims = claims
        self.extra = extra
    }
    init(from decoder: any Decoder) throws { self.claims = try AccessTokenClaims(from: decoder) }
    func encode(to encoder: any Encoder) throws {
        try self.claims.encode(to: encoder)
        guard !self.extra.isEmpty else { return }
        var container = encoder.container(keyedBy: ClaimName.self)
        for (name, value) in self.extra { try container.encode(value, forKey: ClaimName(stringValue: name)) }
    }
    func verify(using algorithm: some JWTAlgorithm) throws {}

    private struct ClaimName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
