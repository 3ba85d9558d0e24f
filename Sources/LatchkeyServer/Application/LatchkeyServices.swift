import JWTKit
import AsyncHTTPClient
import Crypto
import Foundation
import Logging

/// Everything a Latchkey server or the CLI needs, built from a configuration over one database.
///
/// The CLI and `serve` both open one of these, so support commands apply the same rules as the server.
@available(LatchkeyServer 1.0, *)
public struct LatchkeyServices: Sendable {
    public let configuration: LatchkeyConfiguration
    public let database: any LatchkeyDatabase
    public let clock: any WallClock
    public let keyRing: SigningKeyRing
    public let verifier: AccessTokenVerifier
    public let sessions: SessionService
    public let devices: DeviceService
    public let users: UserService
    public let accessCodes: AccessCodeService
    public let guests: GuestService
    public let rateLimiter: RateLimiter
    public let budgets: BudgetService
    /// Sign in with Apple, account linking and third-party identity providers.
    public let federation: FederationService
    public let metrics: LatchkeyMetrics
    /// Applies revocations made by other processes to this process's verification cache.
    public let revocations: RevocationFeed
    /// The issuer in tokens: `public-url`, else the one recorded by the last `serve` on this database.
    public let issuer: String
    /// Checks DPoP proofs (RFC 9449) and hands out their nonces.
    let dpop: DPoPVerifier
    /// Removes rows that no longer decide anything; runs beside the server.
    public let pruner: StorePruner

    /// Opens the database, applies migrations and loads (creating when missing) the signing keys.
    ///
    /// - Parameter recordIssuer: `serve` records its issuer so CLI commands on the same database sign
    ///   access codes the server accepts without being told the public URL again.
    public static func open(
        configuration: LatchkeyConfiguration, clock: any WallClock = SystemClock(), recordIssuer: Bool, logger: Logger
    ) async throws -> LatchkeyServices {
        try Self.validate(configuration)
        let database: any LatchkeyDatabase
        if configuration.usesPostgres {
            database = try await PostgresLatchkeyDatabase(
                url: configuration.database, timeout: configuration.databaseTimeout,
                maximumConnections: configuration.databaseMaxConnections, logger: logger)
        } else {
            database = try await SQLiteLatchkeyDatabase(path: configuration.database, timeout: configuration.databaseTimeout, logger: logger)
        }
        do {
            return try await Self.open(configuration: configuration, database: database, clock: clock, recordIssuer: recordIssuer, logger: logger)
        } catch {
            await database.close()
            throw error
        }
    }

    /// Builds the services over an already opened database.
    public static func open(
        configuration: LatchkeyConfiguration, database: any LatchkeyDatabase, clock: any WallClock, recordIssuer: Bool, logger: Logger
    ) async throws -> LatchkeyServices {
        try Self.validate(configuration)
        try await Migrations.run(on: database, clock: clock, logger: logger)
        let store = SQLLatchkeyStore(database: database)
        let masterKey = try Self.masterKey(configuration)
        let issuer: String
        if recordIssuer || configuration.publicURL != nil {
            issuer = configuration.issuer
            if recordIssuer { try await store.setSetting("issuer", to: issuer) }
        } else {
            issuer = try await store.setting("issuer") ?? configuration.issuer
        }
        let keyRing = SigningKeyRing(store: store, masterKey: masterKey, clock: clock, retention: configuration.keyRetention, logger: logger)
        try await keyRing.prepare()
        let metrics = LatchkeyMetrics()
        let cache = TokenVerificationCache(capacity: configuration.verificationCacheCapacity, ceiling: configuration.verificationCacheCeiling)
        let issuerService = AccessTokenIssuer(
            keyRing: keyRing, issuer: issuer, audience: configuration.audience, guestAudience: configuration.guestAudience, clock: clock,
            metrics: metrics)
        let revocations = RevocationFeed(
            store: store, cache: cache, keyRing: keyRing, interval: configuration.revocationPollInterval, clock: clock, logger: logger)
        try await revocations.start()
        let http = HTTPClient.shared
        var providers: [ExternalTokenVerifier.Provider] = []
        for provider in configuration.identityProviders {
            let keys: any IdentityKeySource =
                if let url = provider.jwksURL {
                    JWKSCache(url: url, http: http, clock: clock, logger: logger)
                } else {
                    try await StaticKeySource.rsa(pem: provider.publicKeyPEM ?? "")
                }
            providers.append(
                ExternalTokenVerifier.Provider(
                    configuration: provider,
                    verifier: IdentityTokenVerifier(
                        keys: keys, issuer: provider.issuer, algorithms: Set(provider.algorithms), clock: clock, leeway: provider.leeway)))
        }
        let external = ExternalTokenVerifier(providers: providers, store: store, clock: clock)
        let verifier = AccessTokenVerifier(
            keyRing: keyRing, cache: cache, sessions: store, accessCodes: store, external: providers.isEmpty ? nil : external, issuer: issuer,
            audience: configuration.audience, guestAudience: configuration.guestAudience, clock: clock)
        let budgets = BudgetService(store: store, policy: configuration.budgets, clock: clock)
        let dpop = DPoPVerifier(nonces: DPoPNonces(key: masterKey.derivedKey(purpose: "dpop nonce")), issuer: issuer, clock: clock)
        let sessions = SessionService(
            store: store, tokens: issuerService, cache: cache, policy: configuration.tokens,
            successorKey: masterKey.derivedKey(purpose: "refresh-token successor"), clock: clock, metrics: metrics, logger: logger)
        let federation = FederationService(
            apple: configuration.apple,
            appleVerifier: configuration.apple.isEnabled
                ? IdentityTokenVerifier(
                    keys: JWKSCache(url: configuration.apple.jwksURL, http: http, clock: clock, logger: logger), issuer: AppleConfiguration.issuer,
                    algorithms: ["RS256"], clock: clock, leeway: configuration.apple.leeway)
                : nil,
            appleClient: AppleClient(configuration: configuration.apple, http: http, clock: clock), external: external, store: store,
            sessions: sessions, masterKey: masterKey, clock: clock, logger: logger)
        return LatchkeyServices(
            configuration: configuration, database: database, clock: clock, keyRing: keyRing, verifier: verifier, sessions: sessions,
            devices: DeviceService(store: store, sessions: sessions, clock: clock),
            users: UserService(store: store, budgets: budgets, federation: federation, cache: cache, clock: clock),
            accessCodes: AccessCodeService(
                store: store, users: store, tokens: issuerService, verifier: verifier, sessions: sessions, cache: cache,
                defaultLifetime: configuration.tokens.accessCodeLifetime, clock: clock),
            guests: GuestService(tokens: issuerService, lifetime: configuration.tokens.guestLifetime, limitations: configuration.guestLimitations),
            rateLimiter: RateLimiter(store: store, clock: clock),
            budgets: budgets, federation: federation,
            metrics: metrics, revocations: revocations, issuer: issuer, dpop: dpop,
            pruner: StorePruner(
                store: store, clock: clock, interval: configuration.pruneInterval, longestWindow: configuration.longestLimitWindow, logger: logger))
    }

    /// Closes the database.
    public func close() async { await self.database.close() }

    /// Revokes the signing key `kid` at once (a leaked key): tokens it signed stop working here at once and in every
    /// other process through the revocation feed, and it leaves the JWKS. False when there is no such key.
    public func revokeSigningKey(kid: String) async throws -> Bool {
        guard try await self.keyRing.revoke(kid: kid) else { return false }
        self.verifier.cache.invalidate(keyID: kid)
        return true
    }

    /// Whether keys may be fetched from `url`: https, or http to a loopback address (local test peers).
    static func isSecureFetchURL(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host else {
            return false
        }
        if scheme == "https" { return true }
        return scheme == "http" && (host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127."))
    }

    /// Settings that parse but do not make sense together.
    public struct ConfigurationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// A fresh random master key, as base64 text for `master-key`.
    public static func newMasterKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    static func masterKey(_ configuration: LatchkeyConfiguration) throws -> MasterKey {
        if let text = configuration.masterKey { return try MasterKey(base64: text) }
        if let file = configuration.masterKeyFile { return try MasterKey.loadOrCreate(filePath: file) }
        return try MasterKey.loadOrCreate(filePath: MasterKey.defaultFilePath(forDatabase: configuration.database))
    }

    static func validate(_ configuration: LatchkeyConfiguration) throws {
        if let problem = configuration.invalidProviders.first ?? configuration.invalidSettings.first {
            throw ConfigurationError(description: problem)
        }
        if configuration.guestAudience == configuration.audience {
            throw ConfigurationError(description: "guest-audience must differ from audience, so guest tokens are told apart from users' tokens")
        }
        let intervals: [(String, TimeInterval)] = [
            ("keys.reload-interval", configuration.keyReloadInterval), ("revocations.poll-interval", configuration.revocationPollInterval),
            ("prune.interval", configuration.pruneInterval), ("http.idle-timeout", configuration.idleTimeout),
        ]
        for (key, seconds) in intervals where !(seconds > 0 && seconds.isFinite) {
            throw ConfigurationError(description: "\(key) must be a number of seconds above 0")
        }
        if let port = configuration.metricsPort, port == configuration.port && port != 0 {
            throw ConfigurationError(description: "metrics.port must differ from port")
        }
        for provider in configuration.identityProviders where provider.audiences.isEmpty && !provider.acceptsAnyAudience {
            throw ConfigurationError(description: "providers.\(provider.name).audiences is missing: name the accepted aud values, or any")
        }
        for url in configuration.identityProviders.compactMap(\.jwksURL) + (configuration.apple.isEnabled ? [configuration.apple.jwksURL] : []) {
            guard Self.isSecureFetchURL(url) else {
                throw ConfigurationError(description: "\(url): keys are fetched over https only (http is allowed for loopback addresses)")
            }
        }
        if let pem = configuration.apple.privateKeyPEM, (try? ES256PrivateKey(pem: pem)) == nil {
            throw ConfigurationError(description: "apple.private-key: not a PEM EC P-256 private key (the .p8 file Apple gives you)")
        }
        let issuers = configuration.identityProviders.map(\.issuer)
        if Set(issuers).count != issuers.count || issuers.contains(configuration.issuer) || issuers.contains(AppleConfiguration.issuer) {
            throw ConfigurationError(description: "providers.*.issuer: every provider needs an issuer of its own (not Latchkey's or Apple's)")
        }
        if configuration.usesPostgres {
            _ = try PostgresLatchkeyDatabase.Location(url: configuration.database)
            if configuration.masterKey == nil && configuration.masterKeyFile == nil {
                throw ConfigurationError(
                    description: """
                        PostgreSQL needs the master key given, the same to every process: set master-key (LATCHKEY_MASTER_KEY, \
                        base64 of 32 bytes; `latchkey keys new-master-key` prints one) or master-key-file (LATCHKEY_MASTER_KEY_FILE)
                        """)
            }
            if configuration.databaseTimeout <= 0 { throw ConfigurationError(description: "database.timeout must be more than 0 seconds") }
        }
        if let bad = configuration.invalidAuthorizationRules.first {
            throw ConfigurationError(
                description: "authorize.routes: cannot read \"\(bad)\"; write \"<METHOD or *> <path prefix> <public|device|bearer|user> [<meter>]\"")
        }
        for rule in configuration.authorizationRules {
            if let meter = rule.meter, configuration.meters[meter] == nil {
                throw ConfigurationError(description: "authorize.routes: no meter named \(meter) (configured: \(configuration.meters.keys.sorted()))")
            }
        }
    }
}
