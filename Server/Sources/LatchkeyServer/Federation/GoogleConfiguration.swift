import Configuration
import Foundation

/// Sign in with Google (`google.*`).
///
/// - `google.client-ids`: the accepted `aud` (and `azp`) values — the iOS and the web OAuth client IDs (a JSON array,
///   or comma-separated); empty switches Sign in with Google off
/// - `google.jwks-url` (`LATCHKEY_GOOGLE_JWKS_URL`, default `https://www.googleapis.com/oauth2/v3/certs`): where
///   Google's public keys are fetched (https; http only for a loopback address)
/// - `google.hosted-domains`: when set, a token's `hd` (the Google Workspace domain) must be one of them; a
///   consumer account's token, which has none, is refused
/// - `google.leeway` (seconds, default 60): tolerated clock difference for `exp`, `iat` and `nbf`
public struct GoogleConfiguration: Sendable {
    /// The `iss` values of Google ID tokens: Google documents both.
    public static let issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]
    public var clientIDs: [String] = []
    public var jwksURL = "https://www.googleapis.com/oauth2/v3/certs"
    public var hostedDomains: [String] = []
    public var leeway: TimeInterval = 60

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.clientIDs = reader.stringArray(forKey: "client-ids", default: [])
        self.jwksURL = reader.string(forKey: "jwks-url", default: defaults.jwksURL)
        self.hostedDomains = reader.stringArray(forKey: "hosted-domains", default: [])
        self.leeway = reader.double(forKey: "leeway", default: defaults.leeway)
    }

    public var isEnabled: Bool { !self.clientIDs.isEmpty }

    /// Whether `domain` (a token's `hd`) is accepted: always without `google.hosted-domains`; with it, only one of them
    /// (DNS names compare without case).
    func accepts(hostedDomain domain: String?) -> Bool {
        guard !self.hostedDomains.isEmpty else { return true }
        guard let domain else { return false }
        return self.hostedDomains.contains { $0.lowercased() == domain.lowercased() }
    }
}
