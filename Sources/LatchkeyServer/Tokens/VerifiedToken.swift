import Foundation
import LatchkeyAPI

/// A bearer token that passed every check: signature, issuer, audience, time and revocation.
public struct VerifiedToken: Sendable, Equatable {
    public let claims: AccessTokenClaims

    public var userID: String { self.claims.subject }
    public var kind: TokenKind { self.claims.kind }
    public var sessionID: String? { self.claims.sessionID }
    public var deviceID: String? { self.claims.deviceID }
    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(self.claims.expiresAt)) }
}

/// Why a bearer token was refused. The message is safe to show: it never quotes the token.
public enum TokenRejection: Error, Equatable, CustomStringConvertible {
    case malformed
    case unsupportedAlgorithm
    case badSignature
    case wrongIssuer
    case wrongAudience
    case expired
    case notYetValid
    case revoked
    case notAnAccessCode

    public var description: String {
        switch self {
        case .malformed: "The token is not a well-formed JWT."
        case .unsupportedAlgorithm: "The token is not signed with ES256."
        case .badSignature: "The token's signature does not verify."
        case .wrongIssuer: "The token was issued by another server."
        case .wrongAudience: "The token is meant for another audience."
        case .expired: "The token has expired."
        case .notYetValid: "The token is not valid yet."
        case .revoked: "The token's session or access code has been revoked."
        case .notAnAccessCode: "The token is not an access code."
        }
    }
}
