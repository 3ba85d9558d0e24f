#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One frame of the session event stream at `GET /api/v1/events` (a WebSocket): JSON text, `{"type", "at", …}`.
///
/// The server sends, in this order of a connection's life:
/// - `connected` once, after the upgrade: the connection is registered and hears every event from now on;
/// - any of `budget.changed`, `identity.linked`, `claims.changed`, `token.expiring`, `reauthenticated`, `error`;
/// - at most one ending: `session.revoked` (close 4001), `user.deleted` then `session.revoked` (close 4001),
///   `token.expired` (close 4002), or a close 4008 when the user opened more sockets than allowed (the oldest goes).
///
/// The client may send `{"type": "reauthenticate", "token": "<newer access token>"}`; see ``SessionEventFrame/reauthenticate(_:)``.
public struct SessionEventFrame: Codable, Sendable, Equatable {
    /// The event's type: one of the constants below.
    public var type: String
    /// When the server sent it.
    public var at: Date?
    /// `session.revoked`: why (``SessionRevocationReason``).
    public var reason: String?
    /// `connected`, `token.expiring`, `reauthenticated`: when the connection's access token expires.
    public var expiresAt: Date?
    /// `connected`: whose events these are.
    public var userID: String?
    /// `connected`: the session of the connecting token, when it has one.
    public var sessionID: String?
    /// `budget.changed`: the user's budget for the period…
    public var limit: Double?
    /// …what is used of it…
    public var used: Double?
    /// …and what remains (never below 0).
    public var remaining: Double?
    /// `identity.linked`: the provider now linked to the user (`apple`, or a configured provider's name).
    public var provider: String?
    /// `error`: a machine-readable code (`bad_frame`, `unknown_type`, `invalid_token`, `wrong_user`)…
    public var error: String?
    /// …and a sentence for people.
    public var message: String?
    /// `reauthenticate` (client → server): the newer access token.
    public var token: String?

    enum CodingKeys: String, CodingKey {
        case type, at, reason
        case expiresAt = "expires_at"
        case userID = "user_id"
        case sessionID = "session_id"
        case limit, used, remaining, provider, error, message, token
    }

    public init(type: String, at: Date? = nil) {
        self.type = type
        self.at = at
    }

    /// The frame a client sends to carry on with a newer access token of the same user (after a refresh).
    public static func reauthenticate(_ token: String) -> SessionEventFrame {
        var frame = SessionEventFrame(type: SessionEventType.reauthenticate)
        frame.token = token
        return frame
    }
}

/// The `type` values of ``SessionEventFrame``.
public enum SessionEventType {
    public static let connected = "connected"
    public static let sessionRevoked = "session.revoked"
    public static let tokenExpiring = "token.expiring"
    public static let tokenExpired = "token.expired"
    public static let budgetChanged = "budget.changed"
    public static let identityLinked = "identity.linked"
    public static let userDeleted = "user.deleted"
    /// The user's `app_metadata` changed (or the backend asked for fresh claims): refresh now to get them.
    public static let claimsChanged = "claims.changed"
    public static let reauthenticated = "reauthenticated"
    public static let error = "error"
    /// Client → server.
    public static let reauthenticate = "reauthenticate"
}

/// The `reason` of a `session.revoked` event; open, so a newer server's reasons decode as themselves.
public struct SessionRevocationReason: OpenWireValue, CaseIterable {
    /// The wire value.
    public let rawValue: String
    /// A value by its wire string; any string, so a newer server's values decode (compare with the constants).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The session logged out (`scope: local`).
    public static let logout = SessionRevocationReason(rawValue: "logout")
    /// A global logout, or a logout of the user's other sessions, from another device.
    public static let logoutGlobal = SessionRevocationReason(rawValue: "logout_global")
    /// The session's refresh token was used twice: someone else holds a copy.
    public static let reuseDetected = SessionRevocationReason(rawValue: "reuse_detected")
    /// The user was deleted.
    public static let deleted = SessionRevocationReason(rawValue: "deleted")
    /// Support ended it: the CLI, a device reset, a revoked access code or signing key.
    public static let admin = SessionRevocationReason(rawValue: "admin")
    /// The user was disabled (by the app's backend or support): sign-in answers 403 `user_disabled` until enabled.
    public static let disabled = SessionRevocationReason(rawValue: "disabled")
    /// The kinds this version knows (a newer server may send others).
    public static let allCases: [SessionRevocationReason] = [.logout, .logoutGlobal, .reuseDetected, .deleted, .admin, .disabled]
}

/// Close codes of the event stream.
public enum SessionEventCloseCode {
    /// The session was revoked (after `session.revoked`).
    public static let revoked: UInt16 = 4001
    /// The access token expired and no `reauthenticate` came in time (after `token.expired`).
    public static let expired: UInt16 = 4002
    /// The user opened more event sockets than allowed; this, the oldest, was closed.
    public static let tooManySockets: UInt16 = 4008
}
