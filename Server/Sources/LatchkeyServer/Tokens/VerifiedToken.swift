import Foundation
import LatchkeyAPI

/// A bearer token that passed every check: signature, issuer, audience, time and revocation.
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
///
/// A struct, not an enum, so reasons can be added without breaking code that switches over them (as jwt-kit's and
/// postgres-nio's errors do): compare with `==`, or match in `catch` and `case` patterns (`catch TokenRejection.malformed`).
public struct TokenRejection: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case malformed, unsupportedAlgorithm, badSignature, wrongIssuer, wrongAudience, expired, notYetValid, revoked, notAnAccessCode, unknownKey,
            issuedInTheFuture, nonceMismatch, nonceReused, unauthorizedParty, missingSubject, wrongType, wrongHostedDomain
    }

    private let base: Base

    public static let malformed = TokenRejection(base: .malformed)
    public static let unsupportedAlgorithm = TokenRejection(base: .unsupportedAlgorithm)
    public static let badSignature = TokenRejection(base: .badSignature)
    public static let wrongIssuer = TokenRejection(base: .wrongIssuer)
    public static let wrongAudience = TokenRejection(base: .wrongAudience)
    public static let expired = TokenRejection(base: .expired)
    public static let notYetValid = TokenRejection(base: .notYetValid)
    public static let revoked = TokenRejection(base: .revoked)
    public static let notAnAccessCode = TokenRejection(base: .notAnAccessCode)
    /// The header names no key, or one the provider does not publish.
    public static let unknownKey = TokenRejection(base: .unknownKey)
    /// `iat` lies in the future beyond the tolerated clock difference.
    public static let issuedInTheFuture = TokenRejection(base: .issuedInTheFuture)
    /// The identity token's `nonce` is not the SHA-256 of the raw nonce sent.
    public static let nonceMismatch = TokenRejection(base: .nonceMismatch)
    /// The identity token (its nonce) was used before.
    public static let nonceReused = TokenRejection(base: .nonceReused)
    /// `azp` names a party the provider configuration does not authorize.
    public static let unauthorizedParty = TokenRejection(base: .unauthorizedParty)
    /// The claim configured as the subject is missing or empty.
    public static let missingSubject = TokenRejection(base: .missingSubject)
    /// The header's `typ` names another kind of JWT (not an access token, or not the provider's configured type).
    public static let wrongType = TokenRejection(base: .wrongType)
    /// A Google token's `hd` (its Workspace domain) is missing or not one of `google.hosted-domains`.
    public static let wrongHostedDomain = TokenRejection(base: .wrongHostedDomain)

    /// A stable name of the reason, for logs.
    public var reason: String { self.base.rawValue }

    public var description: String {
        switch self.base {
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
        case .wrongHostedDomain: "The token's account is not in a domain this server accepts."
        }
    }

    /// Matches an error that is this reason, so `catch TokenRejection.malformed` works.
    public static func ~= (pattern: TokenRejection, error: any Error) -> Bool { (error as? TokenRejection) == pattern }
}
