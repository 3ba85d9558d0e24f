import Configuration
import Foundation

/// Token lifetimes, the refresh-token reuse grace window and how sessions prove themselves.
public struct TokenPolicy: Sendable {
    /// Whether refreshes need a DPoP proof (RFC 9449).
    public enum DPoPMode: String, Sendable {
        /// Sessions started with a DPoP proof are bound to its key and need a proof with every refresh; sessions
        /// started without one (older apps, curl) keep working with their refresh token alone.
        case bound
        /// Every sign-in and refresh needs a proof: clients without a key are refused.
        case required
    }

    /// Access tokens of sessions (device, refresh, exchange), seconds.
    public var sessionLifetime: TimeInterval = 900
    /// Guest access tokens, seconds.
    public var guestLifetime: TimeInterval = 900
    /// Access codes issued without `--expires-in`, seconds.
    public var accessCodeLifetime: TimeInterval = 30 * 86_400
    /// A refresh token not used within this time expires, seconds.
    public var refreshLifetime: TimeInterval = 30 * 86_400
    /// A spent refresh token presented again within this time after its first use gets the chain's newest token.
    public var refreshGrace: TimeInterval = 10
    /// `tokens.dpop`: `bound` (default) or `required`.
    public var dpop: DPoPMode = .bound
    /// Linking an identity, unlinking one and deleting the account need a session begun within this many seconds
    /// (or a fresh DPoP proof with the session's key).
    public var recentAuthentication: TimeInterval = 600

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.sessionLifetime = reader.double(forKey: "session-lifetime", default: defaults.sessionLifetime)
        self.guestLifetime = reader.double(forKey: "guest-lifetime", default: defaults.guestLifetime)
        self.accessCodeLifetime = reader.double(forKey: "access-code-lifetime", default: defaults.accessCodeLifetime)
        self.refreshLifetime = reader.double(forKey: "refresh-lifetime", default: defaults.refreshLifetime)
        self.refreshGrace = reader.double(forKey: "refresh-grace", default: defaults.refreshGrace)
        self.dpop = reader.string(forKey: "dpop").flatMap(DPoPMode.init(rawValue:)) ?? defaults.dpop
        self.recentAuthentication = reader.double(forKey: "recent-authentication", default: defaults.recentAuthentication)
    }
}
