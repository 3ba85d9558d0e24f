import LatchkeyAPI

extension WebhookEventType {
    /// The keys of `data` every event of this type carries (`user_id` for every event about a user).
    var requiredDataKeys: [String] {
        switch self {
        case .userCreated: ["user_id", "kind"]
        case .userUpdated: ["user_id", "change"]
        case .userDeleted, .userDisabled, .budgetExhausted: ["user_id"]
        case .identityLinked, .identityUnlinked: ["user_id", "provider"]
        case .sessionCreated: ["user_id", "session_id"]
        case .sessionRevoked: ["user_id", "session_id", "reason"]
        case .passkeyAdded, .passkeyRemoved: ["user_id", "passkey_id"]
        case .mfaEnabled: ["user_id", "factor_id", "factor_type"]
        case .mfaDisabled: ["user_id", "factor_type"]
        case .webhookTest: []
        }
    }

    /// The keys of `data` some events of this type carry.
    var optionalDataKeys: [String] {
        switch self {
        case .sessionCreated, .sessionRevoked: ["device_id"]
        case .mfaDisabled: ["factor_id"]
        default: []
        }
    }

    /// The values a `data` key may take, where they are a fixed set.
    static let dataValues: [String: [String]] = [
        "reason": SessionRevocationReason.allCases.map(\.rawValue),
        "change": ["email_verified", "email_set", "password_set", "enabled", "app_metadata"],
    ]

    /// The payload's schema name in the API document: `Webhook` and the type in words (`WebhookUserCreated`).
    var schemaName: String {
        "Webhook" + self.rawValue.split(whereSeparator: { $0 == "." || $0 == "_" }).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}
