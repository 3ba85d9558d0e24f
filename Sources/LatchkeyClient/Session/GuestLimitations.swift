import Foundation

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

    /// Creates limitations.
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

/// `POST /api/v1/auth/guest`: `{access_token, token_type, expires_in, limitations}`; no refresh token.
struct GuestTokenResponse: Decodable {
    var accessToken: String
    var expiresIn: Int
    var limitations: GuestLimitations?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case expiresIn = "expires_in"
        case limitations
    }
}

/// Reads the `sub` claim of a JWT without verifying it (the server verifies; the SDK only needs to know whose it is).
enum UnverifiedJWT {
    static func subject(of token: String) -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["sub"] as? String
    }
}
