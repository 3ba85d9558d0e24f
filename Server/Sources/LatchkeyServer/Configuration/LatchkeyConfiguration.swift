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
///   connections each process uses for requests; it holds two more that LISTEN (revocations, user changes)
/// - `public-url` (`LATCHKEY_PUBLIC_URL`, default `http://<host>:<port>`): the token issuer and base of the JWKS URL
/// - `audience` (`LATCHKEY_AUDIENCE`, default `latchkey`): the `aud` claim of every token but guest tokens;
///   `guest-audience` (`LATCHKEY_GUEST_AUDIENCE`, default `<audience>:guest`): theirs
/// - `master-key` (`LATCHKEY_MASTER_KEY`, secret): base64 of 32 bytes, or `master-key-file`
///   (`LATCHKEY_MASTER_KEY_FILE`): a file holding it, created (mode 0600) when missing. Default for SQLite: the
///   file `<database>.key`. PostgreSQL needs one of the two, the same on every process.
/// - `tokens.session-lifetime`, `tokens.guest-lifetime`, `tokens.access-code-lifetime`, `tokens.refresh-lifetime`,
///   `tokens.refresh-grace` (seconds; defaults 900, 900, 2592000, 2592000, 10)
/// - `guest.max-actions-per-day` (default 5), `guest.features-disabled` (comma-separated, default none): the
///   `limitations` a guest token's response reports
/// - `budgets.default-limit`, `budgets.period`, `usage.service-key`: see ``BudgetPolicy``
/// - `meters.*`: meters for an app's own routes; see ``Meter``
/// - `authorize.routes`: the rules of the forward-auth endpoint; see ``AuthorizationRule``. `authorize.proxy`
///   (`nginx`, the default, or `traefik`): which headers name the original request; see ``ForwardAuthProxy``.
///   `authorize.case-sensitive` (default false): whether rule prefixes match paths case for case (set it only when the
///   app behind the proxy routes case-sensitively)
/// - `limits.*`: abuse limits on the identity endpoints and trusted proxies; see ``AbuseLimits``
/// - `http.max-body-size` (bytes, default 65536), `http.idle-timeout` (seconds a connection may sit idle, default 60)
/// - `http.header-timeout` (seconds from a request head's first byte to its end, default 10), `http.max-connections`
///   (open connections of each listener — the API's, `admin.port`'s, `metrics.port`'s — counted apart, default 10000;
///   more are closed at once, and a log line says so)
/// - `http.cors.allowed-origins` (exact origins such as `https://app.example.com`, none by default): browsers on these
///   origins may call the API (CORS, never with credentials); the console never answers cross-origin
/// - `metrics.port` (serve `GET /metrics` on this port of `host` instead of the API's port), `metrics.token`
///   (`LATCHKEY_METRICS_TOKEN`, secret: `GET /metrics` then needs `Authorization: Bearer <token>`); with neither,
///   `GET /metrics` is not served (404) and the start says so
/// - `prune.interval` (seconds, default 300): how often rows that no longer decide anything are removed;
///   `prune.sent-mail-after` (seconds, default 604800): how long a sent mail stays in the outbox (`latchkey outbox list`);
///   `prune.unverified-accounts-after` (seconds, default 604800): how long an address registered without a session and
///   never verified is kept, with the user registration made for it when nothing else hangs on that user
/// - `cache.capacity` (entries, default 100000), `cache.ceiling` (seconds a verified token is trusted without
///   looking at the database again, default 60)
/// - `cache.profile-ttl` (seconds, default 2; 0 turns it off), `cache.profile-capacity` (profiles, default 10000): how
///   long `users/me` may answer from a profile read before; this process's own writes drop it at once
/// - `keys.reload-interval` (seconds, default 30), `keys.retention` (seconds a retired key stays published, default 7776000),
///   `keys.publish-ahead` (seconds a rotated key is published before it signs, default 360: the JWKS's max-age and a minute)
/// - `revocations.poll-interval` (seconds, default 1): how often a server reads revocations made by other processes
///   (on PostgreSQL it also reads them when notified, at once)
/// - `apple.*`: Sign in with Apple; see ``AppleConfiguration``
/// - `google.*`: Sign in with Google; see ``GoogleConfiguration``
/// - `providers.*`: third-party identity providers (Clerk, any OIDC issuer); see ``IdentityProviderConfiguration``
/// - `passkeys.*` and `limits.passkeys`: passkeys (WebAuthn), off until `passkeys.rp-id` is set; see ``PasskeyConfiguration``
/// - `app-attest.*`, `limits.app-attest` and `limits.app-attest-challenge`: App Attest, off by default; see ``AppAttestConfiguration``
/// - `backend.*`: the backend API's service keys; see ``BackendConfiguration``
/// - `claims.max-bytes`, `hooks.claims.*`: `app_metadata` and the claims hook; see ``ClaimsConfiguration``
/// - `webhooks.*`: signed webhooks to the app's backend; see ``WebhooksConfiguration``
/// - `backend.service-keys` (file only): named Bearer keys of the app's backend; see ``ServiceKeyEntry``
/// - `log-level` (`LATCHKEY_LOG_LEVEL`, default `info`)
public struct LatchkeyConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: String = "./latchkey.sqlite"
    public var publicURL: String?
    public var audience: String = "latchkey"
    /// The `aud` of guest tokens; nil means `<audience>:guest`.
    public var guestAudienceSetting: String?
    /// The `aud` of guest tokens.
    public var guestAudience: String { self.guestAudienceSetting ?? self.audience + ":guest" }
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
    /// Which proxy asks the forward-auth endpoint.
    public var authorizeProxy: ForwardAuthProxy = .nginx
    /// Whether forward-auth rules match paths case for case (the app behind the proxy routes case-sensitively).
    public var authorizeCaseSensitive = false
    /// `authorize.routes` entries that could not be read; ``LatchkeyServices/open(configuration:clock:recordIssuer:logger:)`` refuses to start with any.
    public var invalidAuthorizationRules: [String] = []
    public var budgets = BudgetPolicy()
    public var maxBodySize: Int = 64 * 1024
    /// Seconds an HTTP connection may sit idle before the server closes it.
    public var idleTimeout: TimeInterval = 60
    /// Seconds a request head may take from its first byte to its end before the server answers 408 and closes.
    public var headerTimeout: TimeInterval = 10
    /// Open connections each listener (the API's, `admin.port`'s, `metrics.port`'s) keeps, counted apart; one more is
    /// closed at once.
    public var maxConnections: Int = 10_000
    /// Browser origins (`https://app.example.com`, exact) the API answers cross-origin requests from; none by default.
    public var corsAllowedOrigins: [String] = []
    /// A port of its own for `GET /metrics` (then not served on the API's port).
    public var metricsPort: Int?
    /// When set, `GET /metrics` needs `Authorization: Bearer <token>`; without it or ``metricsPort`` it is not served.
    public var metricsToken: String?
    /// Seconds between pruning passes.
    public var pruneInterval: TimeInterval = 300
    /// Seconds a sent mail stays in the outbox.
    public var pruneSentMailAfter: TimeInterval = 7 * 86_400
    /// Seconds an address registered without a session stays unverified before it (and its user) goes.
    public var pruneUnverifiedAccountsAfter: TimeInterval = 7 * 86_400
    /// Settings whose values could not be read; ``LatchkeyServices`` refuses to start with any.
    public var invalidSettings: [String] = []
    public var verificationCacheCapacity: Int = 100_000
    public var verificationCacheCeiling: TimeInterval = 60
    /// Seconds a profile read for `users/me` is kept; 0: not kept.
    public var profileCacheTTL: TimeInterval = 2
    /// Profiles kept at most.
    public var profileCacheCapacity: Int = 10_000
    public var keyReloadInterval: TimeInterval = 30
    public var keyRetention: TimeInterval = 90 * 86_400
    /// Seconds a rotated key is published in the JWKS before it signs: the JWKS's `max-age` (300) and a minute, so no
    /// verifier with a cached JWKS meets an unknown `kid`.
    public var keyPublishAhead: TimeInterval = 360
    public var revocationPollInterval: TimeInterval = 1
    public var logLevel: Logger.Level = .info
    /// Sign in with Apple.
    public var apple = AppleConfiguration()
    /// Sign in with Google.
    public var google = GoogleConfiguration()
    /// Third-party identity providers whose tokens are accepted as Bearer tokens.
    public var identityProviders: [IdentityProviderConfiguration] = []
    /// Storage access: credentials, presigned URLs and assets (`storage.*`); off without `storage.bucket`.
    public var storage = StorageConfiguration()
    /// The event sockets (`GET /api/v1/events`).
    public var events = EventsConfiguration()
    /// Email and password accounts: the SMTP relay, the mails and password hashing (`smtp.*`, `email.*`, `passwords.*`).
    public var email = EmailConfiguration()
    /// The limits of email and password accounts (`limits.login-failures`, `limits.password-login`, `limits.email`,
    /// `limits.mail-per-minute`, `limits.mail-per-hour`).
    public var accountLimits = AccountLimits()
    /// Second factors: `mfa.*`, `limits.mfa-failures`, `limits.mfa-verify`.
    public var mfa = SecondFactorPolicy()
    /// Passkeys: `passkeys.*`, `limits.passkeys`.
    public var passkeys = PasskeyConfiguration()
    /// App Attest: `app-attest.*`, `limits.app-attest`, `limits.app-attest-challenge`.
    public var appAttest = AppAttestConfiguration()
    /// The admin console (`admin.*`).
    public var admin = AdminConfiguration()
    /// The backend API (`backend.*`): the keys app backends present.
    public var backend = BackendConfiguration()
    /// Extra claims in session tokens: `claims.max-bytes`, `hooks.claims.*`.
    public var claims = ClaimsConfiguration()
    /// Webhooks to the app's backend (`webhooks.*`).
    public var webhooks = WebhooksConfiguration()
    /// `backend.service-keys`: the app backend's named Bearer keys (empty when any entry is wrong).
    public var backendServiceKeys: [ServiceKeyEntry] = []
    /// What is wrong with `backend.service-keys`, never quoting a key; ``LatchkeyServices`` refuses to start with any.
    var backendServiceKeyProblems: [String] = []
    /// What was wrong with `providers.*`; ``LatchkeyServices`` refuses to start with any.
    public var invalidProviders: [String] = []
    /// Every setting read by ``load(overrides:configFile:environment:)``, by key, with its value and source (empty for a
    /// configuration built in code).
    public var settings: [String: SettingReading] = [:]

    /// The defaults.
    public init() {}

    /// Reads every key from `reader`, falling back to the defaults.
    public init(reader: ConfigReader) {
        let defaults = Self()
        self.host = reader.string(forKey: "host", default: defaults.host)
        self.port = reader.int(forKey: "port", default: defaults.port)
        // A PostgreSQL URL may hold a password: never shown by the configuration's own descriptions.
        self.database = reader.string(forKey: "database", isSecret: true, default: defaults.database)
        self.publicURL = reader.string(forKey: "public-url")
        self.audience = reader.string(forKey: "audience", default: defaults.audience)
        self.guestAudienceSetting = reader.string(forKey: "guest-audience")
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
        let proxy = reader.string(forKey: "authorize.proxy", default: defaults.authorizeProxy.rawValue)
        self.authorizeProxy = ForwardAuthProxy(rawValue: proxy) ?? defaults.authorizeProxy
        if ForwardAuthProxy(rawValue: proxy) == nil { self.invalidSettings.append("authorize.proxy must be nginx or traefik, not \"\(proxy)\"") }
        self.authorizeCaseSensitive = reader.bool(forKey: "authorize.case-sensitive", default: defaults.authorizeCaseSensitive)
        if let mode = reader.string(forKey: "tokens.dpop"), TokenPolicy.DPoPMode(rawValue: mode) == nil {
            self.invalidSettings.append("tokens.dpop must be bound or required, not \"\(mode)\"")
        }
        self.meters = Meter.meters(reader: reader.scoped(to: "meters"), guestActionsPerDay: self.guestLimitations.maxActionsPerDay ?? 5)
        self.budgets = BudgetPolicy(reader: reader)
        self.maxBodySize = reader.int(forKey: "http.max-body-size", default: defaults.maxBodySize)
        self.idleTimeout = reader.double(forKey: "http.idle-timeout", default: defaults.idleTimeout)
        self.headerTimeout = reader.double(forKey: "http.header-timeout", default: defaults.headerTimeout)
        self.maxConnections = reader.int(forKey: "http.max-connections", default: defaults.maxConnections)
        self.corsAllowedOrigins = reader.stringArray(forKey: "http.cors.allowed-origins", default: [])
        self.metricsPort = reader.int(forKey: "metrics.port")
        self.metricsToken = reader.string(forKey: "metrics.token", isSecret: true)
        self.pruneInterval = reader.double(forKey: "prune.interval", default: defaults.pruneInterval)
        self.pruneSentMailAfter = reader.double(forKey: "prune.sent-mail-after", default: defaults.pruneSentMailAfter)
        self.pruneUnverifiedAccountsAfter = reader.double(forKey: "prune.unverified-accounts-after", default: defaults.pruneUnverifiedAccountsAfter)
        self.verificationCacheCapacity = reader.int(forKey: "cache.capacity", default: defaults.verificationCacheCapacity)
        self.verificationCacheCeiling = reader.double(forKey: "cache.ceiling", default: defaults.verificationCacheCeiling)
        self.profileCacheTTL = reader.double(forKey: "cache.profile-ttl", default: defaults.profileCacheTTL)
        self.profileCacheCapacity = reader.int(forKey: "cache.profile-capacity", default: defaults.profileCacheCapacity)
        self.keyReloadInterval = reader.double(forKey: "keys.reload-interval", default: defaults.keyReloadInterval)
        self.keyRetention = reader.double(forKey: "keys.retention", default: defaults.keyRetention)
        self.keyPublishAhead = reader.double(forKey: "keys.publish-ahead", default: defaults.keyPublishAhead)
        self.revocationPollInterval = reader.double(forKey: "revocations.poll-interval", default: defaults.revocationPollInterval)
        self.apple = AppleConfiguration(reader: reader.scoped(to: "apple"))
        self.google = GoogleConfiguration(reader: reader.scoped(to: "google"))
        self.storage = StorageConfiguration(reader: reader.scoped(to: "storage"))
        self.events = EventsConfiguration(reader: reader.scoped(to: "events"))
        self.email = EmailConfiguration(reader: reader)
        self.accountLimits = AccountLimits(reader: reader.scoped(to: "limits"))
        self.mfa = SecondFactorPolicy(reader: reader.scoped(to: "mfa"), limits: reader.scoped(to: "limits"))
        self.passkeys = PasskeyConfiguration(reader: reader.scoped(to: "passkeys"), limits: reader.scoped(to: "limits"))
        self.appAttest = AppAttestConfiguration(reader: reader.scoped(to: "app-attest"), limits: reader.scoped(to: "limits"))
        self.admin = AdminConfiguration(reader: reader.scoped(to: "admin"))
        self.backend = BackendConfiguration(reader: reader.scoped(to: "backend"))
        self.claims = ClaimsConfiguration(reader: reader)
        (self.identityProviders, self.invalidProviders) = IdentityProviderConfiguration.providers(reader: reader.scoped(to: "providers"))
        self.webhooks = WebhooksConfiguration(reader: reader.scoped(to: "webhooks"))
        let serviceKeys = ServiceKeyEntry.entries(reader: reader)
        (self.backendServiceKeys, self.backendServiceKeyProblems) = (serviceKeys.entries, serviceKeys.problems)
        self.logLevel = reader.string(forKey: "log-level").flatMap(Logger.Level.init(rawValue:)) ?? defaults.logLevel
    }

    /// The window of every abuse limit, meter and account limit, by policy name: a hit older than its policy's window
    /// counts for nothing.
    var limitWindows: [String: TimeInterval] {
        let limits = self.limits
        let policies =
            [
                limits.registerDevice, limits.registerUser, limits.guest, limits.accessCodeExchange, limits.refresh, limits.refreshFailures,
                limits.signIn, limits.assets, limits.events, limits.guestPerNetwork,
            ] + self.meters.values.flatMap { [$0.policy(guest: true), $0.policy(guest: false)] } + self.accountLimits.all
            + [self.mfa.failures, self.mfa.verify, self.passkeys.limit, self.appAttest.limit, self.appAttest.challengeLimit]
        return Dictionary(policies.map { ($0.name, $0.window) }, uniquingKeysWith: max)
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
