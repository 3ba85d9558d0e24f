/// `POST /api/v1/users/register`.
public struct RegisterUserRequest: Codable, Sendable {
    /// The device UUID, which becomes the user ID.
    public var userID: String
    enum CodingKeys: String, CodingKey { case userID = "user_id" }
    public init(userID: String) { self.userID = userID }
}

/// `POST /api/v1/auth/register-device`.
public struct RegisterDeviceRequest: Codable, Sendable {
    /// The device UUID, which becomes the user ID of a new device user.
    public var deviceID: String
    /// The secret returned by the first registration; required to register a known device again.
    public var deviceSecret: String?
    /// App Attest evidence that makes the device attested (see ``AppAttestEvidence``).
    public var appAttest: AppAttestEvidence?
    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case deviceSecret = "device_secret"
        case appAttest = "app_attest"
    }
    public init(deviceID: String, deviceSecret: String? = nil, appAttest: AppAttestEvidence? = nil) {
        self.deviceID = deviceID
        self.deviceSecret = deviceSecret
        self.appAttest = appAttest
    }
}

/// `POST /api/v1/auth/refresh`.
public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// `POST /api/v1/auth/logout`; an empty body means `local`.
public struct LogoutRequest: Codable, Sendable {
    public var scope: LogoutScope?
    public init(scope: LogoutScope? = nil) { self.scope = scope }
}

/// `POST /api/v1/auth/access-code/exchange`.
public struct AccessCodeExchangeRequest: Codable, Sendable {
    public var accessCode: String
    enum CodingKeys: String, CodingKey { case accessCode = "access_code" }
    public init(accessCode: String) { self.accessCode = accessCode }
}
