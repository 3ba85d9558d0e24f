import Foundation
import LatchkeyAPI

/// `GET /api/v1/backend/users/{id}` and the other backend answers about one user: the profile with identities,
/// devices, `app_metadata` (`{}` when unset) and whether the user is disabled.
package struct BackendUserResponse: Codable, Sendable, Equatable {
    package var userID: String
    package var kind: UserKind
    package var createdAt: Date
    package var identities: [UserProfile.Identity]
    package var devices: [UserProfile.Device]
    package var appMetadata: [String: JSONValue]
    package var disabled: Bool
    /// When the user was disabled; absent while they are not.
    package var disabledAt: Date?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case kind, identities, devices, disabled
        case createdAt = "created_at"
        case appMetadata = "app_metadata"
        case disabledAt = "disabled_at"
    }

    init(_ record: BackendUserRecord) {
        self.userID = record.user.id
        self.kind = record.user.kind
        self.createdAt = record.user.createdAt
        self.identities = record.identities.map { UserProfile.Identity(provider: $0.provider, subject: $0.subject, createdAt: $0.createdAt) }
        self.devices = record.devices.map { UserProfile.Device(deviceID: $0.id, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt) }
        self.appMetadata = record.appMetadata.flatMap(JSONValue.object(parsing:)) ?? [:]
        self.disabled = record.disabledAt != nil
        self.disabledAt = record.disabledAt
    }
}

/// `PATCH /api/v1/backend/users/{id}`: `{"app_metadata": {…}}`, a JSON object of at most `claims.max-bytes` (compact);
/// `{}` clears it.
package struct BackendUserUpdate: Codable, Sendable {
    package var appMetadata: JSONValue

    enum CodingKeys: String, CodingKey {
        case appMetadata = "app_metadata"
    }
}

/// `POST /api/v1/backend/users/{id}/revoke-sessions`: how many live sessions were ended.
package struct BackendRevokedSessions: Codable, Sendable, Equatable {
    package var userID: String
    package var revokedSessions: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case revokedSessions = "revoked_sessions"
    }
}
