/// What a Latchkey access token stands for, carried in its `kind` claim.
///
/// Open: a newer server may add kinds, which decode as themselves instead of failing; `switch` over it needs a `default`.
public struct TokenKind: OpenWireValue, CaseIterable {
    /// The wire value.
    public let rawValue: String
    /// A value by its wire string; any string, so a newer server's values decode (compare with the constants).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A session created by device registration, refresh, access-code exchange or an identity provider.
    public static let session = TokenKind(rawValue: "session")
    /// An access code issued by support staff with `latchkey access-code issue`; it has no refresh token.
    public static let accessCode = TokenKind(rawValue: "access_code")
    /// A short-lived guest token; it has no refresh token.
    public static let guest = TokenKind(rawValue: "guest")
    /// Not Latchkey's: a token of a configured identity provider (e.g. a Clerk session token), accepted
    /// as a Bearer and mapped to a Latchkey user. It has no Latchkey session.
    public static let external = TokenKind(rawValue: "external")
    /// The kinds this version knows (a newer server may send others).
    public static let allCases: [TokenKind] = [.session, .accessCode, .guest, .external]
}

/// How a user came to exist.
///
/// Open: a newer server may add kinds (they decode as themselves); `switch` over it needs a `default`.
public struct UserKind: OpenWireValue, CaseIterable {
    /// The wire value.
    public let rawValue: String
    /// A value by its wire string; any string, so a newer server's values decode (compare with the constants).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Created by `users/register` or `auth/register-device`; the user ID is the device UUID.
    public static let device = UserKind(rawValue: "device")
    /// Created by an identity provider (Sign in with Apple, OIDC); the user ID is a fresh UUID.
    public static let federated = UserKind(rawValue: "federated")
    /// A guest token's holder: nothing is stored; the ID is the device UUID from `X-Device-ID`.
    public static let guest = UserKind(rawValue: "guest")
    /// The kinds this version knows (a newer server may send others).
    public static let allCases: [UserKind] = [.device, .federated, .guest]
}

/// Which sessions `POST /api/v1/auth/logout` ends.
public enum LogoutScope: String, Codable, Sendable, CaseIterable {
    /// Only the session of the presented access token.
    case local
    /// Every session of the user.
    case global
    /// Every session of the user except the presented one.
    case others
}
