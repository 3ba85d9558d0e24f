#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of a Latchkey access token, decodable with Foundation alone.
///
/// Standard claims follow RFC 7519; `exp`, `iat` and `nbf` are seconds since 1970.
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    public var issuer: String
    public var audience: String
    /// The user ID (a device UUID for device users). A guest token's subject is `guest:<device UUID>`, which
    /// never names a user.
    public var subject: String
    /// The session ID; absent on access codes and guest tokens.
    public var sessionID: String?
    public var issuedAt: Int64
    public var notBefore: Int64
    public var expiresAt: Int64
    /// The token ID; for an access code this is also the code's ID.
    public var tokenID: String
    public var kind: TokenKind
    /// The device UUID the token is bound to, when there is one.
    public var deviceID: String?
    /// When the user last authenticated (the session began), seconds since 1970; sessions only.
    public var authTime: Int64?
    /// How strongly the session's user was authenticated: `aal1` (one factor) or `aal2` (a second factor proved
    /// at sign-in or by a step-up); sessions only.
    public var aal: AuthenticatorAssuranceLevel?
    /// The ways the session's user proved who they are (RFC 8176 values such as `pwd`, `otp`, `device`, `hwk`); sessions only.
    public var amr: [AuthenticationMethod]?
    /// `true` on tokens of a device attested with App Attest (a guest token of one included); absent otherwise.
    public var attested: Bool?

    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case audience = "aud"
        case subject = "sub"
        case sessionID = "sid"
        case issuedAt = "iat"
        case notBefore = "nbf"
        case expiresAt = "exp"
        case tokenID = "jti"
        case kind
        case deviceID = "did"
        case authTime = "auth_time"
        case aal
        case amr
        case attested = "att"
    }

    public init(
        issuer: String, audience: String, subject: String, sessionID: String?, issuedAt: Int64, notBefore: Int64,
        expiresAt: Int64, tokenID: String, kind: TokenKind, deviceID: String?, authTime: Int64? = nil,
        aal: AuthenticatorAssuranceLevel? = nil, amr: [AuthenticationMethod]? = nil, attested: Bool? = nil
    ) {
        self.issuer = issuer
        self.audience = audience
        self.subject = subject
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.tokenID = tokenID
        self.kind = kind
        self.deviceID = deviceID
        self.authTime = authTime
        self.aal = aal
        self.amr = amr
        self.attested = attested
    }
}
