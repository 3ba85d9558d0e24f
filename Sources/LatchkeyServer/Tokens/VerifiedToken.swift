import Foundation
import LatchkeyAPI

/// A bearer token that passed every check: signature, issuer, audience, time and revocation.
@available(LatchkeyServer 1.0, *)
public struct VerifiedToken: Sendable, Equatable {
    public let claims: AccessTokenClaims
    /// For a token of a configured identity provider (``TokenKind/external``): the provider's name…
    public let provider: String?
    /// …and the user's subject there.
    public let providerSubject: String?
    /// The `kid` of the Latchkey key that signed it (nil for a provider's token): revoking that key drops it.
    let keyID: String?

    public init(claims: AccessTokenClaims, provider: String? = nil, providerSubject: String? = nil) {
        self.init(claims: claims, provider: provider, providerSubject: providerSubject, keyID: nil)
    }

    init(claims: AccessTokenClaims, provider: String? = nil, providerSubject: String? = nil, keyID: String?) {
        self.claims = claims
        self.provider = provider
        self.providerSubject = providerSubject
        self.keyID = keyID
    }

    public var userID: String { self.claims.subject }
    public var kind: TokenKind { self.claims.kind }
    public var sessionID: String? { self.claims.sessionID }
    public var deviceID: String? { self.claims.deviceID }
    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(self.claims.expiresAt)) }
}

/// Why a bearer token was refused. The message is safe to show: it never quotes the token.
@available(LatchkeyServer 1.0, *)
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
    /// The header names no key, or one the provider does not publish.
    case unknownKey
    /// `iat` lies in the future beyond the tolerated clock difference.
    case issuedInTheFuture
    /// The identity token's `nonce` is not the SHA-256 of the raw nonce sent.
    case nonceMismatch
    /// The identity token (its nonce) was used before.
    case nonceReused
    /// `azp` names a party the provider configuration does not authorize.
    case unauthorizedParty
    /// The claim configured as the subject is missing or empty.
    case missingSubject
    /// The header's `typ` names another kind of JWT (not an access token, or not the provider's configured type).
    case wrongType

    public var description: String {
        switch self {
        case .malformed: "The token is not a well-formed JWT."
        case .unsupportedAlgorithm: "The token is not signed with an accepted algorithm."
        case .badSignature: "The token's signature does not verify."
        case .wrongIssuer: "The token was issued by another server."
        case .wrongAudience: "The token is meant for another audience."
        case .expired: "The token has expired."
        case .notYetValid: "The token is not valid yet."
        case .revoked: "The token's session or access code has been revoked."
        case .notAnAccessCode: "The token is not an access code."
        case .unknownKey: "The token names no signing key the issuer publishes."
        case .issuedInTheFuture: "The token was issued in the future."
        case .nonceMismatch: "The token's nonce does not match the raw nonce."
        case .nonceReused: "The token has been used before."
        case .unauthorizedParty: "The token was issued to a party that is not authorized."
        case .missingSubject: "The token names no subject."
        case .wrongType: "The token is not an access token (its typ header names another kind of JWT)."
        }
    }
}
