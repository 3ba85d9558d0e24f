/// What a guest may not do, as `POST /api/v1/auth/guest` reports it.
public struct GuestLimitations: Codable, Sendable, Equatable {
    /// Successful actions a guest device may make per day.
    public var maxActionsPerDay: Int?
    /// Features a guest cannot use.
    public var featuresDisabled: [String]

    enum CodingKeys: String, CodingKey {
        case maxActionsPerDay = "max_actions_per_day"
        case featuresDisabled = "features_disabled"
    }

    public init(maxActionsPerDay: Int? = nil, featuresDisabled: [String] = []) {
        self.maxActionsPerDay = maxActionsPerDay
        self.featuresDisabled = featuresDisabled
    }

    /// Decodes limitations; missing fields are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.maxActionsPerDay = try container.decodeIfPresent(Int.self, forKey: .maxActionsPerDay)
        self.featuresDisabled = try container.decodeIfPresent([String].self, forKey: .featuresDisabled) ?? []
    }
}

/// `POST /api/v1/auth/guest`: a short-lived guest access token; there is no refresh token.
public struct GuestSessionResponse: Codable, Sendable {
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the token expires.
    public var expiresIn: Int
    public var limitations: GuestLimitations?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case limitations
    }

    public init(accessToken: String, expiresIn: Int, limitations: GuestLimitations) {
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.limitations = limitations
    }
}
