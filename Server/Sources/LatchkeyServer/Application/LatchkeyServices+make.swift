import AsyncHTTPClient
import Foundation
import LatchkeyAppAttest
import LatchkeyPasswords
import LatchkeySMTP
import Logging

extension LatchkeyServices {
    /// Wires every service over `database`; reads nothing from it.
    package static func make(
        configuration: LatchkeyConfiguration, database: any LatchkeyDatabase, clock: any WallClock, issuer: String, logger: Logger
    ) async throws -> LatchkeyServices {
        try Self.validate(configuration)
        let store = SQLLatchkeyStore(
            database: database,
            profiles: ProfileCache(ttl: configuration.profileCacheTTL, capacity: configuration.profileCacheCapacity, clock: clock))
        let masterKey = try Self.masterKey(configuration)
        let keyRing = SigningKeyRing(
            store: store, masterKey: masterKey, clock: clock, retention: configuration.keyRetention,
            publishAhead: configuration.keyPublishAhead, logger: logger)
        let metrics = LatchkeyMetrics()
        let cache = TokenVerificationCache(capacity: configuration.verificationCacheCapacity, ceiling: configuration.verificationCacheCeiling)
        // First of the change feed's subscribers: whoever hears a change after it and verifies a token misses the ended ones.
        cache.follow(store.changes)
        let tokens = AccessTokenIssuer(
            keyRing: keyRing, issuer: issuer, audience: configuration.audience, guestAudience: configuration.guestAudience, clock: clock,
            metrics: metrics)
        let http = HTTPClient.shared
        let external = try await ExternalTokenVerifier.make(configuration.identityProviders, store: store, clock: clock, logger: logger)
        let verifier = AccessTokenVerifier(
            keyRing: keyRing, cache: cache, sessions: store, accessCodes: store, external: external.providers.isEmpty ? nil : external,
            issuer: issuer, audience: configuration.audience, guestAudience: configuration.guestAudience, clock: clock)
        let storage = StorageService(
            configuration: configuration.storage, client: ObjectStorageClient(configuration: configuration.storage, http: http),
            cache: StorageCredentialsCache(clock: clock), clock: clock)
        storage.follow(store.changes)
        let budgets = BudgetService(store: store, policy: configuration.budgets, clock: clock)
        let sessions = SessionService(
            store: store, tokens: tokens, policy: configuration.tokens, secondFactors: configuration.mfa, refreshLimit: configuration.limits.refresh,
            successorKey: masterKey.derivedKey(purpose: "refresh-token successor"), clock: clock, metrics: metrics, logger: logger,
            claimsHook: ClaimsHook(configuration.claims, http: http, clock: clock, metrics: metrics, logger: logger), claimsStore: store,
            attestations: configuration.appAttest.isEnabled ? store : nil)
        let appAttest = AppAttestService(
            configuration: configuration.appAttest,
            verifier: AppAttestVerifier(
                appIDs: configuration.appAttest.appIDs, environment: configuration.appAttest.environment,
                extraRoots: try configuration.appAttest.extraRoots()),
            store: store, limiter: RateLimiter(store: store, clock: clock), audit: AuditLog(store: store, clock: clock, logger: logger), clock: clock,
            metrics: metrics, logger: logger)
        let federation = FederationService(
            apple: configuration.apple,
            appleVerifier: configuration.apple.isEnabled
                ? IdentityTokenVerifier(
                    keys: JWKSCache(url: configuration.apple.jwksURL, http: .keyFetching, clock: clock, logger: logger),
                    issuer: AppleConfiguration.issuer, algorithms: ["RS256"], clock: clock, leeway: configuration.apple.leeway)
                : nil,
            google: configuration.google,
            googleVerifier: configuration.google.isEnabled
                ? IdentityTokenVerifier(
                    keys: JWKSCache(url: configuration.google.jwksURL, http: .keyFetching, clock: clock, logger: logger),
                    issuers: GoogleConfiguration.issuers, algorithms: ["RS256"], clock: clock, leeway: configuration.google.leeway,
                    expiryLeeway: configuration.google.leeway)
                : nil,
            appleClient: AppleClient(configuration: configuration.apple, http: http, clock: clock), external: external, store: store, users: store,
            sessions: sessions, masterKey: masterKey, clock: clock, logger: logger)
        let events = EventHub(
            verifier: verifier, lookups: store, budgets: budgets, configuration: configuration.events, clock: clock, metrics: metrics, logger: logger)
        events.follow(store.changes)
        let email = configuration.email
        let sender: OutboxSender? =
            if let smtp = try email.smtpConfiguration(), let from = email.from {
                OutboxSender(
                    store: store, client: try SMTPClient(configuration: smtp),
                    from: try MailAddress(try EmailAddress(parsing: from).address, displayName: email.appName), masterKey: masterKey,
                    configuration: email, clock: clock, logger: logger)
            } else { nil }
        if email.isEnabled && email.isBelowOWASP {
            logger.warning(
                "password hashing is below OWASP's Argon2id parameters (m=19456 KiB, t=2): for tests only",
                metadata: ["argon2_memory": "\(email.argon2Memory)", "argon2_iterations": "\(email.argon2Iterations)"])
        }
        let pool = PasswordHashingPool(
            hasher: try PasswordHasher(algorithm: email.hashAlgorithm), threads: email.hashingThreads, queueLimit: email.queueLimit)
        let audit = AuditLog(store: store, clock: clock, logger: logger)
        let accounts = EmailAccountService(
            store: store, pool: pool,
            sessions: sessions, limiter: RateLimiter(store: store, clock: clock), limits: configuration.accountLimits,
            masterKey: masterKey, templates: try MailTemplates(directory: email.templatesDirectory), configuration: email,
            linkBase: email.linkBaseURL ?? issuer, clock: clock, logger: logger, sender: sender)
        return LatchkeyServices(
            configuration: configuration, database: database, clock: clock, store: store, keyRing: keyRing, verifier: verifier,
            sessions: sessions, devices: DeviceService(store: store, sessions: sessions, clock: clock, appAttest: appAttest),
            users: UserService(
                store: store, budgets: budgets, grants: federation, clock: clock, attestations: configuration.appAttest.isEnabled ? store : nil),
            accessCodes: AccessCodeService(
                store: store, users: store, tokens: tokens, verifier: verifier, sessions: sessions,
                defaultLifetime: configuration.tokens.accessCodeLifetime, audit: AuditLog(store: store, clock: clock, logger: logger), clock: clock),
            guests: GuestService(
                tokens: tokens, lifetime: configuration.tokens.guestLifetime, limitations: configuration.guestLimitations, appAttest: appAttest),
            rateLimiter: RateLimiter(store: store, clock: clock), budgets: budgets, federation: federation, storage: storage, metrics: metrics,
            revocations: RevocationFeed(
                store: store, changes: store.changes, keyRing: keyRing, interval: configuration.revocationPollInterval, clock: clock, logger: logger),
            issuer: issuer, dpop: DPoPVerifier(nonces: DPoPNonces(key: masterKey.derivedKey(purpose: "dpop nonce")), issuer: issuer, clock: clock),
            pruner: StorePruner(
                store: store, clock: clock, interval: configuration.pruneInterval, limitWindows: configuration.limitWindows,
                refreshGrace: configuration.tokens.refreshGrace, sentMailAfter: configuration.pruneSentMailAfter,
                unverifiedAccountsAfter: configuration.pruneUnverifiedAccountsAfter, logger: logger),
            events: events, accounts: accounts, outboxSender: sender,
            webhooks: WebhookDeliverer(
                store: store, configuration: configuration.webhooks, http: .webhookDelivery, clock: clock, metrics: metrics, logger: logger),
            admin: AdminService(
                store: store, pool: pool, limiter: RateLimiter(store: store, clock: clock), limits: configuration.accountLimits,
                configuration: configuration.admin, clock: clock, csrfKey: masterKey.derivedKey(purpose: "admin csrf"), masterKey: masterKey,
                // The console's factor apart from an app account of the same person in their authenticator app.
                issuer: (configuration.mfa.issuer ?? email.appName) + " admin", logger: logger),
            secondFactors: SecondFactorService(
                store: store, sessions: sessions, accounts: accounts, masterKey: masterKey, limiter: RateLimiter(store: store, clock: clock),
                policy: configuration.mfa, issuer: configuration.mfa.issuer ?? email.appName,
                audit: audit, clock: clock, logger: logger),
            passkeys: PasskeyService(
                configuration: configuration.passkeys, rpName: configuration.passkeys.rpName ?? email.appName, store: store, sessions: sessions,
                accounts: accounts, audit: audit, clock: clock, logger: logger),
            appAttest: appAttest, logger: logger)
    }
}
