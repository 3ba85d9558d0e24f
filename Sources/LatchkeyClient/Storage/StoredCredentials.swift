import Foundation

/// What the SDK keeps in a ``SecureStore``: the device identity and, when signed in, the session.
///
/// Its description, debug description and mirror name no token and no secret.
public struct StoredCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// This install's device UUID.
    public var deviceID: UUID
    /// The secret the server returned when this device first registered without a key (older SDKs); needed to
    /// register it again, until the device proves itself with its key.
    public var deviceSecret: String?
    /// The device's key, which proves it to the server (see ``DeviceKey``).
    public var deviceKey: DeviceKey?
    /// The current session, if any.
    public var session: StoredSession?
    /// Whether the device UUID was found in UserDefaults alone and this install has not registered it yet: a phone
    /// restored from a backup gets UserDefaults back but not the `ThisDeviceOnly` Keychain item holding the key or
    /// secret. When the server then says the device is another install's (`invalid_device_secret`), the SDK starts a
    /// new identity (see ``LatchkeySession/Configuration/restoredDevicePolicy``).
    public var deviceIDRestored: Bool
    /// The ID of this device's App Attest key (``AppAttestProvider``), once one was made: kept with the device identity,
    /// so the key is attested once and then asserted. Not a secret (the SHA-256 of the key's public key).
    public var appAttestKeyID: String?
    /// Whether the server accepted the attestation of ``appAttestKeyID`` for this device (its token said `att: true`):
    /// from then on a guest sign-in proves the key with an assertion.
    public var appAttestKeyAttested: Bool

    /// Creates credentials.
    public init(
        deviceID: UUID, deviceSecret: String? = nil, deviceKey: DeviceKey? = nil, session: StoredSession? = nil, deviceIDRestored: Bool = false,
        appAttestKeyID: String? = nil, appAttestKeyAttested: Bool = false
    ) {
        self.deviceID = deviceID
        self.deviceSecret = deviceSecret
        self.deviceKey = deviceKey
        self.session = session
        self.deviceIDRestored = deviceIDRestored
        self.appAttestKeyID = appAttestKeyID
        self.appAttestKeyAttested = appAttestKeyAttested
    }

    /// The device ID and whether a secret, a key and a session are present; never their values.
    public var description: String {
        "StoredCredentials(device: \(self.deviceID), secret: \(self.deviceSecret == nil ? "none" : "<redacted>"), "
            + "key: \(self.deviceKey == nil ? "none" : "<redacted>"), session: \(self.session.map(\.description) ?? "none"))"
    }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["credentials": self.description]) }
}

/// What a stored session stands for.
public enum SessionKind: String, Codable, Sendable, Equatable {
    /// A session with a refresh token (device registration, access-code exchange).
    case session
    /// An access code used directly as the bearer (the Stori flow); no refresh token.
    case accessCode = "access_code"
    /// A short-lived guest token; no refresh token.
    case guest
    /// A token supplied by an external identity provider's SDK through a token provider; never stored.
    case external
}

/// A session as kept in a ``SecureStore``. Its description names no token.
public struct StoredSession: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What the session stands for.
    public var kind: SessionKind
    /// The user ID (`sub`); for device users the lowercase device UUID.
    public var userID: String
    /// The server's session ID, when the session has one.
    public var sessionID: String?
    /// The bearer token.
    public var accessToken: String
    /// When the access token expires, by the SDK's clock.
    public var accessTokenExpiresAt: Date
    /// The refresh token, for sessions that have one.
    public var refreshToken: String?

    /// Creates a stored session.
    public init(
        kind: SessionKind, userID: String, sessionID: String? = nil, accessToken: String, accessTokenExpiresAt: Date, refreshToken: String? = nil
    ) {
        self.kind = kind
        self.userID = userID
        self.sessionID = sessionID
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.refreshToken = refreshToken
    }

    /// Kind, user and expiry; never a token.
    public var description: String {
        "StoredSession(\(self.kind.rawValue), user: \(self.userID), expires: \(self.accessTokenExpiresAt.timeIntervalSince1970), tokens: <redacted>)"
    }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["session": self.description]) }
}
