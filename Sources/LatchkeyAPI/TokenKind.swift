/// What a Latchkey access token stands for, carried in its `kind` claim.
public enum TokenKind: String, Codable, Sendable, CaseIterable {
    /// A session created by device registration, refresh, access-code exchange or an identity provider.
    case session
    /// An access code issued by support staff with `latchkey access-code issue`; it has no refresh token.
    case accessCode = "access_code"
    /// A short-lived guest token; it has no refresh token.
    case guest
    /// Not Latchkey's: a token of a configured identity provider (e.g. a Clerk session token), accepted
    /// as a Bearer and mapped to a Latchkey user. It has no Latchkey session.
    case external
}

/// How a user came to exist.
public enum UserKind: String, Codable, Sendable, CaseIterable {
    /// Created by `users/register` or `auth/register-device`; the user ID is the device UUID.
    case device
    /// Created by an identity provider (Sign in with Apple, OIDC); the user ID is a fresh UUID.
    case federated
    /// A guest token's holder: nothing is stored; the ID is the device UUID from `X-Device-ID`.
    case guest
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
