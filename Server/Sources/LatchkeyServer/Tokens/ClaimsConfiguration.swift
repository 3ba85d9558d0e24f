import Configuration
import Foundation

/// Claims beyond the fixed ones in session access tokens. Keys: `claims.max-bytes` (default 2048: the most a user's
/// `app_metadata` and a hook's claims may take, each in compact JSON), `hooks.claims.url` (the claims hook, off when
/// unset), `hooks.claims.secret` (`LATCHKEY_HOOKS_CLAIMS_SECRET`, secret: `whsec_` + base64 of at least 24 bytes, the
/// Standard Webhooks key its calls are signed with), `hooks.claims.timeout` (seconds, default 2),
/// `hooks.claims.on-failure` (`omit`, the default: issue without the hook's claims; `refuse`: answer 503, nothing changed).
public struct ClaimsConfiguration: Sendable {
    /// What a failed hook call does.
    public enum FailureMode: String, Sendable {
        /// The token is issued without the hook's claims (an outage of the app's hook never locks users out).
        case omit
        /// The sign-in or refresh is refused with 503 and nothing changes.
        case refuse
    }

    public var maxBytes = 2048
    public var hookURL: String?
    public var hookSecret: String?
    public var hookTimeout: TimeInterval = 2
    public var onFailure = FailureMode.omit
    /// `hooks.claims.on-failure` as read, when it is no mode.
    var unreadableMode: String?

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.maxBytes = reader.int(forKey: "claims.max-bytes", default: defaults.maxBytes)
        self.hookURL = reader.string(forKey: "hooks.claims.url")
        self.hookSecret = reader.string(forKey: "hooks.claims.secret", isSecret: true)
        self.hookTimeout = reader.double(forKey: "hooks.claims.timeout", default: defaults.hookTimeout)
        let mode = reader.string(forKey: "hooks.claims.on-failure", default: defaults.onFailure.rawValue)
        self.onFailure = FailureMode(rawValue: mode) ?? defaults.onFailure
        if FailureMode(rawValue: mode) == nil { self.unreadableMode = mode }
    }

    /// What is wrong with the settings, if anything (never a secret's value).
    var problems: [String] {
        var problems: [String] = []
        if let mode = self.unreadableMode { problems.append("hooks.claims.on-failure must be omit or refuse, not \"\(mode)\"") }
        if !(self.maxBytes >= 2 && self.maxBytes <= 65_536) { problems.append("claims.max-bytes must be 2 to 65536") }
        if !(self.hookTimeout > 0 && self.hookTimeout <= 60) { problems.append("hooks.claims.timeout must be above 0 and at most 60 seconds") }
        if let url = self.hookURL {
            // Its answer becomes claims in tokens: over plain http anyone on the path could add some.
            if !WebhookEndpoint.isAllowedURL(url) {
                problems.append("hooks.claims.url must be an https URL (http only for a loopback host such as 127.0.0.1 or localhost)")
            }
            if self.hookSecret == nil { problems.append("hooks.claims.url needs hooks.claims.secret (whsec_ and base64 of 24 bytes or more)") }
        }
        if let secret = self.hookSecret, Self.signingKey(secret) == nil {
            problems.append("hooks.claims.secret must be whsec_ followed by base64 of 24 bytes or more")
        }
        return problems
    }

    /// The key of a Standard Webhooks secret: the base64 after `whsec_`, decoded (24 bytes or more).
    static func signingKey(_ secret: String) -> Data? {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))), bytes.count >= 24 else { return nil }
        return bytes
    }
}
