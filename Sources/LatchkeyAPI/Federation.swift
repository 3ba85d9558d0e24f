/// `POST /api/v1/auth/apple`: what an app sends after Sign in with Apple.
///
/// Without a Bearer the identity signs in (a first sign-in creates a user); with a device session's
/// Bearer the Apple identity is linked to that session's user, which keeps its ID and data.
public struct AppleSignInRequest: Codable, Sendable, Equatable {
    /// `ASAuthorizationAppleIDCredential.identityToken`, as UTF-8 text.
    public var identityToken: String
    /// The random nonce whose SHA-256 (lowercase hex) the app put in the Apple request.
    public var rawNonce: String
    /// `ASAuthorizationAppleIDCredential.authorizationCode`: when sent (and the server has a Sign in with
    /// Apple key), the server exchanges it for Apple's refresh token, which account deletion revokes.
    public var authorizationCode: String?

    enum CodingKeys: String, CodingKey {
        case identityToken = "identity_token"
        case rawNonce = "raw_nonce"
        case authorizationCode = "authorization_code"
    }

    public init(identityToken: String, rawNonce: String, authorizationCode: String? = nil) {
        self.identityToken = identityToken
        self.rawNonce = rawNonce
        self.authorizationCode = authorizationCode
    }
}

/// `POST /api/v1/auth/google`: what an app sends after Sign in with Google.
///
/// Without a Bearer the Google account signs in (a first sign-in creates a user); with a session's Bearer it is linked
/// to that session's user, which keeps its ID and data. The app gets the ID token from GoogleSignIn-iOS
/// (`GIDGoogleUser.idToken.tokenString`).
public struct GoogleSignInRequest: Codable, Sendable, Equatable {
    /// The Google ID token (a JWT), as text.
    public var idToken: String
    /// The nonce the app gave Google for this sign-in, exactly as given: Google puts it in the ID token unhashed, and the
    /// server compares the two byte for byte. `nil` when the app gave Google none (the token must then carry none).
    public var nonce: String?

    enum CodingKeys: String, CodingKey {
        case idToken = "id_token"
        case nonce
    }

    public init(idToken: String, nonce: String? = nil) {
        self.idToken = idToken
        self.nonce = nonce
    }
}

/// `POST /api/v1/auth/token-exchange`: trades a configured identity provider's token (e.g. a Clerk
/// session token) for a Latchkey session.
public struct TokenExchangeRequest: Codable, Sendable, Equatable {
    /// The provider's JWT.
    public var subjectToken: String

    enum CodingKeys: String, CodingKey { case subjectToken = "subject_token" }

    public init(subjectToken: String) { self.subjectToken = subjectToken }
}

/// `DELETE /api/v1/users/me` and `latchkey users delete`.
public struct AccountDeletionResponse: Codable, Sendable, Equatable {
    public var userID: String
    /// Sessions that ended with the account.
    public var revokedSessions: Int
    /// Apple refresh tokens revoked at Apple's `/auth/revoke` (App Store guideline 5.1.1(v)).
    public var appleTokensRevoked: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case revokedSessions = "revoked_sessions"
        case appleTokensRevoked = "apple_tokens_revoked"
    }

    public init(userID: String, revokedSessions: Int, appleTokensRevoked: Int) {
        self.userID = userID
        self.revokedSessions = revokedSessions
        self.appleTokensRevoked = appleTokensRevoked
    }
}

/// `DELETE /api/v1/users/me/identities/{provider}`: what was unlinked.
public struct UnlinkIdentityResponse: Codable, Sendable, Equatable {
    /// The provider whose identities were unlinked (`apple`, or a configured provider's name).
    public var provider: String
    /// How many identities of that provider were linked to the account (usually one).
    public var unlinked: Int

    public init(provider: String, unlinked: Int) {
        self.provider = provider
        self.unlinked = unlinked
    }
}
