import Configuration
import Foundation
import LatchkeyAPI
import Logging

/// Everything a Latchkey server or CLI reads from its configuration.
///
/// Keys (environment variable in brackets; a JSON config file uses the same dotted keys as nested objects):
/// - `host` (`LATCHKEY_HOST`, default `127.0.0.1`), `port` (`LATCHKEY_PORT`, default `8080`)
/// - `database` (`LATCHKEY_DATABASE`, default `./latchkey.sqlite`): an SQLite file path, or a
///   `postgres://user:password@host:port/database` URL (query options `sslmode=disable|prefer|require` and
///   `search_path=<schema>`) for PostgreSQL, which several server processes can share
/// - `database.timeout` (seconds, default 5): PostgreSQL only — the bound on every database operation, waiting
///   for a connection included; past it the request answers 503. `database.max-connections` (default 20): the
///   pool size of each process
/// - `public-url` (`LATCHKEY_PUBLIC_URL`, default `http://<host>:<port>`): the token issuer and base of the JWKS URL
/// - `audience` (`LATCHKEY_AUDIENCE`, default `latchkey`): the `aud` claim of every token
/// - `master-key` (`LATCHKEY_MASTER_KEY`, secret): base64 of 32 bytes, or `master-key-file`
///   (`LATCHKEY_MASTER_KEY_FILE`): a file holding it, created (mode 0600) when missing. Default for SQLite: the
///   file `<database>.key`. PostgreSQL needs one of the two, the same on every process.
/// - `tokens.session-lifetime`, `tokens.guest-lifetime`, `tokens.access-code-lifetime`, `tokens.refresh-lifetime`,
///   `tokens.refresh-grace` (seconds; defaults 900, 900, 2592000, 2592000, 10)
/// - `guest.max-actions-per-day` (default 5), `guest.features-disabled` (comma-separated, default none): the
///   `limitations` a guest token's response reports
/// - `budgets.default-limit`, `budgets.period`, `usage.service-key`: see ``BudgetPolicy``
/// - `meters.*`: meters for an app's own routes; see ``Meter``
/// - `authorize.routes`: the rules of the forward-auth endpoint; see ``AuthorizationRule``
/// - `limits.*`: abuse limits on the identity endpoints and trusted proxies; see ``AbuseLimits``
/// - `http.max-body-size` (bytes, default 65536)
/// - `cache.capacity` (entries, default 100000), `cache.ceiling` (seconds a verified token is trusted without
///   looking at the database again, default 60)
/// - `keys.reload-interval` (seconds, default 30), `keys.retention` (seconds a retired key stays published, default 7776000)
/// - `revocations.poll-interval` (seconds, default 1): how often a server reads revocations made by other processes
///   (on PostgreSQL it also reads them when notified, at once)
/// - `apple.*`: Sign in with Apple; see ``AppleConfiguration``
/// - `providers.*`: third-party identity providers (Clerk, any OIDC issuer); see ``IdentityProviderConfiguration``
/// - `log-level` (`LATCHKEY_LOG_LEVEL`, default `info`)
@available(LatchkeyServer 1.0, *)
public struct LatchkeyConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: String = "./latchkey.sqlite"
    public var publicURL: String?
    public var audience: String = "latchkey"
    /// Base64 of 32 bytes; nil means "use `masterKeyFile`".
    public var masterKey: String?
    /// A file holding the master key; nil means `<database>.key` for SQLite.
    public var masterKeyFile: String?
    /// PostgreSQL: the bound on one database operation, in seconds.
    public var databaseTimeout: TimeInterval = 5
    /// PostgreSQL: connections in this process's pool.
    public var databaseMaxConnections: Int = 20
    public var tokens = TokenPolicy()
    /// What `POST /api/v1/auth/guest` reports as the guest's limitations.
    public var guestLimitations = GuestLimitations(maxActionsPerDay: 5, featuresDisabled: [])
    public var limits = AbuseLimits()
    /// Meters for an app's own routes, by name (``MeterMiddleware``).
    public var meters: [String: Meter] = ["actions": Meter(name: "actions", guestLimit: 5, userLimit: 0)]
    /// The rules of `GET /api/v1/authorize` (forward authentication for proxies), first match wins.
    public var authorizationRules: [AuthorizationRule] = []
    /// `authorize.routes` entries that could not be read; ``LatchkeyServices/open(configuration:clock:recordIssuer:logger:)`` refuses to start with any.
    public var invalidAuthorizationRules: [String] = []
    public var budgets = BudgetPolicy()
    public var maxBodySize: Int = 64 * 1024
    public var verificationCacheCapacity: Int = 100_000
    public var verificationCacheCeiling: TimeInterval = 60
    public var keyReloadInterval: TimeInterval = 30
    public var keyRetention: TimeInterval = 90 * 86_400
    public var revocationPollInterval: TimeInterval = 1
    public var logLevel: Logger.Level = .info
    /// Sign in with Apple.
    public var apple = AppleConfiguration()
    /// Third-party identity providers whose tokens are accepted as Bearer tokens.
    public var identityProviders: [IdentityProviderConfiguration] = []
    /// What was wrong with `providers.*`; ``LatchkeyServices`` refuses to start with any.
    public var invalidProviders: [String] = []

    /// The defaults.
    public init() {}

    /// Reads every key from `reader`, falling back to the defaults.
    public init(reader: ConfigReader) {
        let defaults = Self()
        self.host = reader.string(forKey: "host", default: defaults.host)
        self.port = reader.int(forKey: "port", default: defaults.port)
        self.database = reader.string(forKey: "database", default: defaults.database)
        self.publicURL = reader.string(forKey: "public-url")
        self.audience = reader.string(forKey: "audience", default: defaults.audience)
        self.masterKey = reader.string(forKey: "master-key", isSecret: true)
        self.masterKeyFile = reader.string(forKey: "master-key-file")
        self.databaseTimeout = reader.double(forKey: "database.timeout", default: defaults.databaseTimeout)
        self.databaseMaxConnections = reader.int(forKey: "database.max-connections", default: defaults.databaseMaxConnections)
        self.tokens = TokenPolicy(reader: reader.scoped(to: "tokens"))
        self.guestLimitations = GuestLimitations(
            maxActionsPerDay: reader.int(forKey: "guest.max-actions-per-day", default: defaults.guestLimitations.maxActionsPerDay ?? 5),
            featuresDisabled: reader.stringArray(forKey: "guest.features-disabled", default: defaults.guestLimitations.featuresDisabled))
        self.limits = AbuseLimits(reader: reader.scoped(to: "limits"))
        let ruleTexts = reader.stringArray(forKey: "authorize.routes", default: [])
        self.authorizationRules = ruleTexts.compactMap(AuthorizationRule.init)
        self.invalidAuthorizationRules = ruleTexts.filter { AuthorizationRule($0) == nil }
        self.meters = Meter.meters(reader: reader.scoped(to: "meters"), guestActionsPerDay: self.guestLimitations.maxActionsPerDay ?? 5)
        self.budgets = BudgetPolicy(reader: reader)
        self.maxBodySize = reader.int(forKey: "http.max-body-size", default: defaults.maxBodySize)
        self.verificationCacheCapacity = reader.int(forKey: "cache.capacity", default: defaults.verificationCacheCapacity)
        self.verificationCacheCeiling = reader.double(forKey: "cache.ceiling", default: defaults.verificationCacheCeiling)
        self.keyReloadInterval = reader.double(forKey: "keys.reload-interval", default: defaults.keyReloadInterval)
        self.keyRetention = reader.double(forKey: "keys.retention", default: defaults.keyRetention)
        self.revocationPollInterval = reader.double(forKey: "revocations.poll-interval", default: defaults.revocationPollInterval)
        self.apple = AppleConfiguration(reader: reader.scoped(to: "apple"))
        (self.identityProviders, self.invalidProviders) = IdentityProviderConfiguration.providers(reader: reader.scoped(to: "providers"))
        self.logLevel = reader.string(forKey: "log-level").flatMap(Logger.Level.init(rawValue:)) ?? defaults.logLevel
    }

    /// `database` fit for a log line: a PostgreSQL URL loses its password.
    public var databaseDescription: String {
        guard self.usesPostgres else { return self.database }
        return (try? PostgresLatchkeyDatabase.Location(url: self.database).description) ?? "postgres://(unreadable URL)"
    }

    /// Whether `database` names PostgreSQL.
    public var usesPostgres: Bool { PostgresLatchkeyDatabase.Location.isPostgres(self.database) }

    /// The issuer: `public-url` without a trailing slash, else `http://host:port`.
    public var issuer: String {
        var url = self.publicURL ?? "http://\(self.host):\(self.port)"
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}

/// Token lifetimes and the refresh-token reuse grace window, in seconds.
@available(LatchkeyServer 1.0, *)
public struct TokenPolicy: Sendable {
    /// Access tokens of sessions (device, refresh, exchange).
    public var sessionLifetime: TimeInterval = 900
    /// Guest access tokens.
    public var guestLifetime: TimeInterval = 900
    /// Access codes issued without `--expires-in`.
    public var accessCodeLifetime: TimeInterval = 30 * 86_400
    /// A refresh token not used within this time expires.
    public var refreshLifetime: TimeInterval = 30 * 86_400
    /// A refresh token presented again within this time after its first use gets the same successor.
    public var refreshGrace: TimeInterval = 10

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.sessionLifetime = reader.double(forKey: "session-lifetime", default: defaults.sessionLifetime)
        self.guestLifetime = reader.double(forKey: "guest-lifetime", default: defaults.guestLifetime)
        self.accessCodeLifetime = reader.double(forKey: "access-code-lifetime", default: defaults.accessCodeLifetime)
        self.refreshLifetime = reader.double(forKey: "refresh-lifetime", default: defaults.refreshLifetime)
        self.refreshGrace = reader.double(forKey: "refresh-grace", default: defaults.refreshGrace)
    }

    /// The access-token lifetime for tokens of `kind` (access codes carry their own expiry).
    func accessLifetime(for kind: TokenKind) -> TimeInterval {
        switch kind {
        case .session, .external: self.sessionLifetime
        case .guest: self.guestLifetime
        case .accessCode: self.accessCodeLifetime
        }
    }
}
