import Foundation

/// One of the signed-in user's live sessions, as `GET /api/v1/users/me/sessions` lists it: where the user is signed in.
public struct AccountSession: Codable, Sendable, Equatable, Identifiable {
    /// The session's ID: the `sid` of its tokens, and what ``LatchkeyClient/endSession(id:)`` takes.
    public var id: String
    /// The device it belongs to; nil for a session of no device (a password, Apple or passkey sign-in on the web).
    public var deviceID: String?
    /// How it began: `device`, `password`, `apple`, `google`, `passkey`, `access_code`, `federated` or `email` (more may
    /// come: compare, do not switch exhaustively).
    public var method: String
    /// When it began.
    public var createdAt: Date
    /// The UTC day it was last used (created or refreshed), `YYYY-MM-DD`: a day, never the moment.
    public var lastUsedAt: String
    /// Whether it is the session of the token that asked.
    public var current: Bool

    enum CodingKeys: String, CodingKey {
        case id
        case deviceID = "device_id"
        case method
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case current
    }

    public init(id: String, deviceID: String?, method: String, createdAt: Date, lastUsedAt: String, current: Bool) {
        self.id = id
        self.deviceID = deviceID
        self.method = method
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.current = current
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(String.self, forKey: .id)
        // `device_id` is always present: null for a session of no device.
        if try !container.contains(.deviceID) || container.decodeNil(forKey: .deviceID) {
            self.deviceID = nil
        } else {
            self.deviceID = try container.decode(String.self, forKey: .deviceID)
        }
        self.method = try container.decode(String.self, forKey: .method)
        self.createdAt = try container.decode(Date.self, forKey: .createdAt)
        self.lastUsedAt = try container.decode(String.self, forKey: .lastUsedAt)
        self.current = try container.decode(Bool.self, forKey: .current)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        // `device_id` is always present: null for a session of no device.
        try container.encode(self.deviceID, forKey: .deviceID)
        try container.encode(self.method, forKey: .method)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.lastUsedAt, forKey: .lastUsedAt)
        try container.encode(self.current, forKey: .current)
    }
}

/// `GET /api/v1/users/me/sessions`: the user's live sessions, newest first (ended ones are not listed).
public struct AccountSessionsResponse: Codable, Sendable, Equatable {
    public var sessions: [AccountSession]
    public init(sessions: [AccountSession]) { self.sessions = sessions }
}

/// `GET /api/v1/users/me/export`: everything Latchkey holds about the user (GDPR Art. 15 and 20), never a token, secret
/// or hash of one.
public struct AccountExport: Codable, Sendable, Equatable {
    /// The user's profile.
    public struct User: Codable, Sendable, Equatable {
        public var id: String
        public var kind: UserKind
        public var createdAt: Date
        /// The address that signs in with a password, when there is one, and whether it was verified.
        public var email: String?
        public var emailVerified: Bool?
        /// When support or the app's backend disabled the user, if it did.
        public var disabledAt: Date?
        /// What the app's backend stored about the user (`app_metadata`): the JSON object's text, when there is one.
        public var appMetadata: String?
        /// The user's passkeys (names and dates; never a key).
        public var passkeys: [Passkey]
        /// The user's second factors (kinds and dates; never a secret or a recovery code).
        public var secondFactors: [SecondFactor]

        enum CodingKeys: String, CodingKey {
            case id, kind, email, passkeys
            case createdAt = "created_at"
            case emailVerified = "email_verified"
            case disabledAt = "disabled_at"
            case appMetadata = "app_metadata"
            case secondFactors = "second_factors"
        }

        public init(
            id: String, kind: UserKind, createdAt: Date, email: String? = nil, emailVerified: Bool? = nil, disabledAt: Date? = nil,
            appMetadata: String? = nil, passkeys: [Passkey] = [], secondFactors: [SecondFactor] = []
        ) {
            self.id = id
            self.kind = kind
            self.createdAt = createdAt
            self.email = email
            self.emailVerified = emailVerified
            self.disabledAt = disabledAt
            self.appMetadata = appMetadata
            self.passkeys = passkeys
            self.secondFactors = secondFactors
        }
    }

    /// A linked identity: the provider and the user's subject there (never the provider's tokens).
    public struct Identity: Codable, Sendable, Equatable {
        public var provider: String
        public var subject: String
        /// The address the provider gave, when it gave one.
        public var email: String?
        public var createdAt: Date

        enum CodingKeys: String, CodingKey {
            case provider, subject, email
            case createdAt = "created_at"
        }

        public init(provider: String, subject: String, email: String?, createdAt: Date) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.createdAt = createdAt
        }
    }

    /// A registered device (never its secret).
    public struct Device: Codable, Sendable, Equatable {
        public var id: String
        public var createdAt: Date
        public var lastSeenAt: Date?
        /// Whether it proves a key it holds (DPoP) instead of a secret.
        public var keyBound: Bool

        enum CodingKeys: String, CodingKey {
            case id
            case createdAt = "created_at"
            case lastSeenAt = "last_seen_at"
            case keyBound = "key_bound"
        }

        public init(id: String, createdAt: Date, lastSeenAt: Date?, keyBound: Bool) {
            self.id = id
            self.createdAt = createdAt
            self.lastSeenAt = lastSeenAt
            self.keyBound = keyBound
        }
    }

    /// A session, live or ended.
    public struct Session: Codable, Sendable, Equatable {
        public var id: String
        public var deviceID: String?
        public var method: String
        public var createdAt: Date
        public var lastUsedAt: Date?
        public var endedAt: Date?
        /// Why it ended (`logout`, `admin`, …), when it did.
        public var endReason: String?

        enum CodingKeys: String, CodingKey {
            case id, method
            case deviceID = "device_id"
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
            case endedAt = "ended_at"
            case endReason = "end_reason"
        }

        public init(id: String, deviceID: String?, method: String, createdAt: Date, lastUsedAt: Date?, endedAt: Date?, endReason: String?) {
            self.id = id
            self.deviceID = deviceID
            self.method = method
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
            self.endedAt = endedAt
            self.endReason = endReason
        }
    }

    /// One record of spending against the budget.
    public struct Usage: Codable, Sendable, Equatable {
        public var amount: Double
        public var at: Date
        /// The key the app's backend recorded it under.
        public var idempotencyKey: String

        enum CodingKeys: String, CodingKey {
            case amount, at
            case idempotencyKey = "idempotency_key"
        }

        public init(amount: Double, at: Date, idempotencyKey: String) {
            self.amount = amount
            self.at = at
            self.idempotencyKey = idempotencyKey
        }
    }

    /// A support or account action whose target is the user (or one of its sessions or devices).
    public struct AuditEvent: Codable, Sendable, Equatable {
        public var at: Date
        public var actor: String
        public var action: String
        public var target: String
        public var source: String
        public var details: String?

        public init(at: Date, actor: String, action: String, target: String, source: String, details: String?) {
            self.at = at
            self.actor = actor
            self.action = action
            self.target = target
            self.source = source
            self.details = details
        }
    }

    /// A passkey: its name and dates (never its credential or key).
    public struct Passkey: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var createdAt: Date
        public var lastUsedAt: Date?

        enum CodingKeys: String, CodingKey {
            case id, name
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }

        public init(id: String, name: String, createdAt: Date, lastUsedAt: Date?) {
            self.id = id
            self.name = name
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
        }
    }

    /// A second factor: its kind and dates (never its secret).
    public struct SecondFactor: Codable, Sendable, Equatable {
        public var id: String
        public var type: FactorType
        public var createdAt: Date
        public var confirmedAt: Date?

        enum CodingKeys: String, CodingKey {
            case id, type
            case createdAt = "created_at"
            case confirmedAt = "confirmed_at"
        }

        public init(id: String, type: FactorType, createdAt: Date, confirmedAt: Date?) {
            self.id = id
            self.type = type
            self.createdAt = createdAt
            self.confirmedAt = confirmedAt
        }
    }

    public var user: User
    public var identities: [Identity]
    public var devices: [Device]
    /// Every session the server still keeps, newest first, ended ones included.
    public var sessions: [Session]
    /// The budget of the current period.
    public var budget: UserProfile.Budget
    /// Every usage record kept, newest first.
    public var usage: [Usage]
    /// Newest first.
    public var auditEvents: [AuditEvent]

    enum CodingKeys: String, CodingKey {
        case user, identities, devices, sessions, budget, usage
        case auditEvents = "audit_events"
    }

    public init(
        user: User, identities: [Identity], devices: [Device], sessions: [Session], budget: UserProfile.Budget, usage: [Usage],
        auditEvents: [AuditEvent]
    ) {
        self.user = user
        self.identities = identities
        self.devices = devices
        self.sessions = sessions
        self.budget = budget
        self.usage = usage
        self.auditEvents = auditEvents
    }
}
