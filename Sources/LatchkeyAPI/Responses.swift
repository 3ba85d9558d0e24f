#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The answer of `users/register`: whether the user was created by this call.
public struct RegisterUserResponse: Codable, Sendable, Equatable {
    public var userID: String
    public var created: Bool
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case created
    }
    public init(userID: String, created: Bool) {
        self.userID = userID
        self.created = created
    }
}

/// An access token and its refresh token, as returned by every endpoint that starts or continues a session.
public struct TokenPairResponse: Codable, Sendable {
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    public var refreshToken: String
    /// Seconds until the refresh token expires if it is not used.
    public var refreshTokenExpiresIn: Int
    public var userID: String
    public var sessionID: String
    /// Present only on the response that registered a new device: keep it, it is never shown again.
    public var deviceSecret: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case refreshTokenExpiresIn = "refresh_token_expires_in"
        case userID = "user_id"
        case sessionID = "session_id"
        case deviceSecret = "device_secret"
    }

    public init(
        accessToken: String, expiresIn: Int, refreshToken: String, refreshTokenExpiresIn: Int, userID: String, sessionID: String,
        deviceSecret: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
        self.userID = userID
        self.sessionID = sessionID
        self.deviceSecret = deviceSecret
    }
}

/// `GET /api/v1/validate-token` for a valid token.
public struct ValidateTokenResponse: Codable, Sendable, Equatable {
    public var valid: Bool
    public var sub: String
    /// Expiry, seconds since 1970.
    public var exp: Int64
    public var kind: TokenKind
    public init(sub: String, exp: Int64, kind: TokenKind) {
        self.valid = true
        self.sub = sub
        self.exp = exp
        self.kind = kind
    }
}

/// `GET /api/v1/validate-token` for an invalid token: `{"valid": false, "error": {...}}` with status 401.
public struct InvalidTokenResponse: Codable, Sendable, Equatable {
    public var valid: Bool
    public var error: ErrorEnvelope.Detail
    public init(error: ErrorEnvelope.Detail) {
        self.valid = false
        self.error = error
    }
}

/// The profile returned by `GET /api/v1/auth/me` and `GET /api/v1/users/me`.
public struct UserProfile: Codable, Sendable, Equatable {
    public struct Identity: Codable, Sendable, Equatable {
        /// `apple`, `google` or the name of a configured identity provider.
        public var provider: String
        public var subject: String
        public var createdAt: Date
        /// The email address the provider gave with the identity, when it gave one (Apple and Google: only an address they
        /// verified). Shown only: it never finds or merges accounts.
        public var email: String?
        enum CodingKeys: String, CodingKey {
            case provider
            case subject
            case createdAt = "created_at"
            case email
        }
        public init(provider: String, subject: String, createdAt: Date, email: String? = nil) {
            self.provider = provider
            self.subject = subject
            self.createdAt = createdAt
            self.email = email
        }
    }

    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: String
        public var createdAt: Date
        public var lastSeenAt: Date?
        /// The device proved with App Attest that it runs a genuine copy of the app (false when the server is older).
        public var attested: Bool
        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id"
            case createdAt = "created_at"
            case lastSeenAt = "last_seen_at"
            case attested
        }
        public init(deviceID: String, createdAt: Date, lastSeenAt: Date?, attested: Bool = false) {
            self.deviceID = deviceID
            self.createdAt = createdAt
            self.lastSeenAt = lastSeenAt
            self.attested = attested
        }
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.deviceID = try container.decode(String.self, forKey: .deviceID)
            self.createdAt = try container.decode(Date.self, forKey: .createdAt)
            self.lastSeenAt = try container.decodeIfPresent(Date.self, forKey: .lastSeenAt)
            self.attested = try container.decodeIfPresent(Bool.self, forKey: .attested) ?? false
        }
    }

    /// A user's spending allowance over a rolling period, in the app's own units.
    public struct Budget: Codable, Sendable, Equatable {
        public var limit: Double
        public var used: Double
        /// `limit - used`, never below zero.
        public var remaining: Double
        /// The rolling period, e.g. `30d` or `3600s`.
        public var period: String
        public init(limit: Double, used: Double, period: String) {
            self.limit = limit
            self.used = used
            self.remaining = max(0, limit - used)
            self.period = period
        }
    }

    public var userID: String
    public var kind: UserKind
    public var createdAt: Date
    /// The user's budget; absent for guests.
    public var budget: Budget?
    /// The kind of the token that asked.
    public var tokenKind: TokenKind
    public var sessionID: String?
    public var identities: [Identity]
    public var devices: [Device]
    /// For a token of a configured identity provider (`token_kind` `external`): the provider's name…
    public var provider: String?
    /// …and the user's subject at that provider (e.g. Clerk's `user_…` ID).
    public var providerSubject: String?
    /// The user's email address (for signing in with a password), when it has one; absent from older servers.
    public var email: String?
    /// Whether ``email`` was verified from the mail: until then it signs nobody in and belongs to nobody.
    public var emailVerified: Bool?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case kind
        case createdAt = "created_at"
        case tokenKind = "token_kind"
        case sessionID = "session_id"
        case identities
        case devices
        case budget
        case provider
        case providerSubject = "provider_subject"
        case email
        case emailVerified = "email_verified"
    }

    public init(
        userID: String, kind: UserKind, createdAt: Date, tokenKind: TokenKind, sessionID: String?, identities: [Identity],
        devices: [Device], budget: Budget? = nil, provider: String? = nil, providerSubject: String? = nil, email: String? = nil,
        emailVerified: Bool? = nil
    ) {
        self.email = email
        self.emailVerified = emailVerified
        self.provider = provider
        self.providerSubject = providerSubject
        self.budget = budget
        self.userID = userID
        self.kind = kind
        self.createdAt = createdAt
        self.tokenKind = tokenKind
        self.sessionID = sessionID
        self.identities = identities
        self.devices = devices
    }
}

/// `GET /api/v1/health`.
public struct HealthResponse: Codable, Sendable, Equatable {
    public var status: String
    public var version: String
    public init(status: String, version: String) {
        self.status = status
        self.version = version
    }
}

/// `GET /api/v1/health/ready` when the database answers.
public struct ReadinessResponse: Codable, Sendable, Equatable {
    public var status: String
    public var database: String
    public init(status: String, database: String) {
        self.status = status
        self.database = database
    }
}

/// `POST /api/v1/auth/logout`.
public struct LogoutResponse: Codable, Sendable, Equatable {
    /// How many sessions this call ended.
    public var revokedSessions: Int
    enum CodingKeys: String, CodingKey { case revokedSessions = "revoked_sessions" }
    public init(revokedSessions: Int) { self.revokedSessions = revokedSessions }
}

/// `POST /api/v1/usage`: an app backend records what a user spent.
public struct UsageRequest: Codable, Sendable {
    public var userID: String
    /// Positive, in the budget's units.
    public var amount: Double
    /// The same key twice counts once (retries are safe).
    public var idempotencyKey: String
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case amount
        case idempotencyKey = "idempotency_key"
    }
    public init(userID: String, amount: Double, idempotencyKey: String) {
        self.userID = userID
        self.amount = amount
        self.idempotencyKey = idempotencyKey
    }
}

/// The answer of `POST /api/v1/usage`: the user's budget after it.
public struct UsageResponse: Codable, Sendable, Equatable {
    public var userID: String
    /// False when the idempotency key had been recorded before (nothing was added).
    public var recorded: Bool
    public var budget: UserProfile.Budget
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case recorded
        case budget
    }
    public init(userID: String, recorded: Bool, budget: UserProfile.Budget) {
        self.userID = userID
        self.recorded = recorded
        self.budget = budget
    }
}
