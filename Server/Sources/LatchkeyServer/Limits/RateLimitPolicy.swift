import Configuration
import Foundation

/// One limit: at most `limit` requests per rolling `window` seconds per key.
///
/// A `limit` of 0 switches the policy off.
public struct RateLimitPolicy: Sendable, Equatable {
    /// Named in bucket keys and logs.
    public var name: String
    public var limit: Int
    /// Seconds; the window rolls (a hit stops counting `window` seconds after it was made).
    public var window: TimeInterval
    /// Meters and refreshes per session count only requests answered 2xx; abuse limits count every attempt.
    public var countsOnlySuccesses: Bool

    public init(name: String, limit: Int, window: TimeInterval, countsOnlySuccesses: Bool = false) {
        self.name = name
        self.limit = limit
        self.window = window
        self.countsOnlySuccesses = countsOnlySuccesses
    }

    var isEnabled: Bool { self.limit > 0 && self.window > 0 }

    /// Reads `<name>.limit` and `<name>.window` under `reader`, defaulting to this policy's values.
    func reading(_ reader: ConfigReader) -> RateLimitPolicy {
        RateLimitPolicy(
            name: self.name, limit: reader.int(forKey: ConfigKey([self.name, "limit"]), default: self.limit),
            window: reader.double(forKey: ConfigKey([self.name, "window"]), default: self.window), countsOnlySuccesses: self.countsOnlySuccesses)
    }
}

/// Abuse limits on the identity endpoints, and which proxies may say who the client is.
///
/// Keys (under `limits.`): `register-device.limit`/`.window` (default 30 per 3600 s per client IP), `register-user.*`
/// (`users/register`: 30 per 3600 s per client IP),
/// `guest.*` (30 per 3600 s per client IP — Supabase's default for anonymous sign-ins),
/// `access-code-exchange.*` (30 per 300 s per client IP), `refresh.*` (30 successful refreshes per 300 s per
/// session: many phones share one carrier IP), `refresh-failures.*` (60 failed refreshes per 300 s per client
/// IP), `sign-in.*` (Sign in with Apple, with Google and token exchange: 30 per 300 s per client IP), `trusted-proxies`
/// (comma-separated IP addresses whose `X-Forwarded-For` is believed, and which may ask `GET /api/v1/authorize`),
/// `guest-per-network` (admitted guest actions on metered routes per client per day, across device IDs: 50; 0 is off).
/// Client IPs are counted per address for IPv4 and per /64 network for IPv6.
/// Every attempt counts, whatever its answer, except on refresh (see ``refresh`` and ``refreshFailures``).
public struct AbuseLimits: Sendable, Equatable {
    public var registerDevice = RateLimitPolicy(name: "register-device", limit: 30, window: 3600)
    public var registerUser = RateLimitPolicy(name: "register-user", limit: 30, window: 3600)
    public var guest = RateLimitPolicy(name: "guest", limit: 30, window: 3600)
    public var accessCodeExchange = RateLimitPolicy(name: "access-code-exchange", limit: 30, window: 300)
    /// Successful refreshes per session. Only successes count: the session ID is no secret (it is every access
    /// token's `sid`), so counting attempts would let anyone lock a user out with made-up refresh tokens.
    public var refresh = RateLimitPolicy(name: "refresh", limit: 30, window: 300, countsOnlySuccesses: true)
    /// Failed refreshes (malformed, unknown, expired, revoked or reused tokens) per client IP. Generous, because
    /// a carrier NAT puts thousands of phones behind one address and some of their sessions will have been
    /// revoked (such an app fails once, then signs in again); yet it holds someone hammering from one address
    /// to 12 tries a minute, on average, that reach the session store. Over the limit a token this server
    /// issued is still tried, so the address's real users keep refreshing: see `RateLimiter.limitingFailures`.
    public var refreshFailures = RateLimitPolicy(name: "refresh-failures", limit: 60, window: 300)
    /// `POST /api/v1/auth/apple` and `POST /api/v1/auth/token-exchange`, which may create users.
    public var signIn = RateLimitPolicy(name: "sign-in", limit: 30, window: 300)
    /// `GET /api/v1/assets` and `GET /api/v1/assets/url`, per device (`X-Device-ID` of a known device): 300 per hour.
    public var assets = RateLimitPolicy(name: "assets", limit: 300, window: 3600)
    /// Upgrade attempts at `GET /api/v1/events` per client IP: 60 per 300 s (an app reconnects with backoff).
    public var events = RateLimitPolicy(name: "events", limit: 60, window: 300)
    /// Admitted guest actions on metered routes (``MeterMiddleware``, forward-auth rules with a meter that limits guests)
    /// per client — an IPv4 address or an IPv6 /64 — per day, whatever device IDs they name: a guest's meter is per
    /// device, and device IDs are the client's to make up. `limits.guest-per-network` (0 switches it off).
    public var guestPerNetwork = RateLimitPolicy(name: "guest-per-network", limit: 50, window: 86_400)
    /// Peers whose `X-Forwarded-For` header names the client; nobody else's is believed.
    public var trustedProxies: Set<String> = []

    public init() {}

    /// No abuse limits at all (benchmarks, tests of other features).
    public static var off: AbuseLimits {
        var limits = AbuseLimits()
        for keyPath in [
            \AbuseLimits.registerDevice, \.registerUser, \.guest, \.accessCodeExchange, \.refresh, \.refreshFailures, \.signIn, \.assets, \.events,
            \.guestPerNetwork,
        ] {
            limits[keyPath: keyPath].limit = 0
        }
        return limits
    }

    init(reader: ConfigReader) {
        let defaults = Self()
        self.registerDevice = defaults.registerDevice.reading(reader)
        self.registerUser = defaults.registerUser.reading(reader)
        self.guest = defaults.guest.reading(reader)
        self.accessCodeExchange = defaults.accessCodeExchange.reading(reader)
        self.refresh = defaults.refresh.reading(reader)
        self.refreshFailures = defaults.refreshFailures.reading(reader)
        self.signIn = defaults.signIn.reading(reader)
        self.assets = defaults.assets.reading(reader)
        self.events = defaults.events.reading(reader)
        self.guestPerNetwork.limit = reader.int(forKey: "guest-per-network", default: defaults.guestPerNetwork.limit)
        self.trustedProxies = Set(reader.stringArray(forKey: "trusted-proxies", default: []))
    }
}

/// A meter for an app's own routes (seed 003's "5 edits a day per device"): a rolling window with one limit
/// for guests and one for signed-in users. Guests are counted per SHA-256(client IP + device ID), so a new
/// guest token does not reset a device's count; users per user ID. Only 2xx answers count.
///
/// Keys (under `meters.`): `names` (comma-separated meter names; default `actions`), and per meter
/// `<name>.window` (seconds, default 86400), `<name>.guest-limit`, `<name>.user-limit` (0: unlimited). The
/// default `actions` meter allows guests `guest.max-actions-per-day` (5) a day and users any number.
public struct Meter: Sendable, Equatable {
    public var name: String
    public var window: TimeInterval
    public var guestLimit: Int
    public var userLimit: Int

    public init(name: String, window: TimeInterval = 86_400, guestLimit: Int, userLimit: Int) {
        self.name = name
        self.window = window
        self.guestLimit = guestLimit
        self.userLimit = userLimit
    }

    /// The policy that applies to a caller with a guest token (`guest: true`) or any other token.
    func policy(guest: Bool) -> RateLimitPolicy {
        RateLimitPolicy(
            name: "meter." + self.name + (guest ? ".guest" : ".user"), limit: guest ? self.guestLimit : self.userLimit,
            window: self.window, countsOnlySuccesses: true)
    }

    /// The policy for a token: a guest whose device is not attested (no `att`) is held to `unattestedGuestLimit` instead of
    /// the guest limit, when one is given and the meter limits guests at all (App Attest's budget tier).
    func policy(guest: Bool, attested: Bool, unattestedGuestLimit: Int?) -> RateLimitPolicy {
        var policy = self.policy(guest: guest)
        if guest && !attested && self.guestLimit > 0, let limit = unattestedGuestLimit { policy.limit = limit }
        return policy
    }

    static func meters(reader: ConfigReader, guestActionsPerDay: Int) -> [String: Meter] {
        var meters: [String: Meter] = [:]
        for name in reader.stringArray(forKey: "names", default: ["actions"]) {
            let defaults = Meter(name: name, guestLimit: name == "actions" ? guestActionsPerDay : 0, userLimit: 0)
            meters[name] = Meter(
                name: name, window: reader.double(forKey: ConfigKey([name, "window"]), default: defaults.window),
                guestLimit: reader.int(forKey: ConfigKey([name, "guest-limit"]), default: defaults.guestLimit),
                userLimit: reader.int(forKey: ConfigKey([name, "user-limit"]), default: defaults.userLimit))
        }
        return meters
    }
}
