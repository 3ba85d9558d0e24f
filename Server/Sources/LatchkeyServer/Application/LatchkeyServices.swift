import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle

/// Everything a Latchkey server or the CLI needs, built from a configuration over one database.
///
/// Built in two steps, so a server's long-lived parts all run in its one `ServiceGroup`: ``make(configuration:clock:logger:)``
/// wires the services without touching the database; ``prepare()`` (run before the server listens) applies migrations,
/// records the issuer, loads the signing keys and starts reading the revocation feed; ``backgroundServices`` (the
/// database's own service, the key reloader, the revocation feed, the pruner, the event sockets' expiry sweep and, on
/// PostgreSQL, the listener of other processes' user changes) run beside the HTTP server. Support
/// commands use ``withServices(configuration:clock:recordIssuer:logger:_:)``, which does all of that for the length of a
/// call, so they apply the same rules as the server.
public struct LatchkeyServices: Sendable {
    public let configuration: LatchkeyConfiguration
    package let database: any LatchkeyDatabase
    /// Whether ``prepare(recordingIssuer:)`` has run, and what kept it from it meanwhile.
    package let readiness = Readiness()
    public let clock: any WallClock
    package let store: SQLLatchkeyStore
    package let keyRing: SigningKeyRing
    public let verifier: AccessTokenVerifier
    package let sessions: SessionService
    package let devices: DeviceService
    public let users: UserService
    package let accessCodes: AccessCodeService
    package let guests: GuestService
    package let rateLimiter: RateLimiter
    public let budgets: BudgetService
    /// Sign in with Apple, account linking and third-party identity providers.
    package let federation: FederationService
    /// Vended storage credentials, presigned URLs and assets.
    package let storage: StorageService
    package let metrics: LatchkeyMetrics
    /// Applies revocations made by other processes to this process's verification cache.
    package let revocations: RevocationFeed
    /// The issuer in tokens: `public-url`, else the one recorded by the last `serve` on this database.
    package let issuer: String
    /// Checks DPoP proofs (RFC 9449) and hands out their nonces.
    let dpop: DPoPVerifier
    /// Removes rows that no longer decide anything; runs beside the server.
    package let pruner: StorePruner
    /// The open event sockets (`GET /api/v1/events`) and what they are told.
    package let events: EventHub
    /// Email and password accounts (also for the CLI's support commands when no SMTP relay is configured).
    package let accounts: EmailAccountService
    /// Delivers the outbox; nil without `smtp.host`.
    package let outboxSender: OutboxSender?
    /// Delivers the webhook outbox to `webhooks.endpoints` (with none, it only marks events fanned out).
    package let webhooks: WebhookDeliverer
    /// Admin console accounts and sessions (hashing on the email accounts' threads).
    package let admin: AdminService
    /// TOTP factors and recovery codes.
    package let secondFactors: SecondFactorService
    /// Passkeys: adding them, signing in with them, the user's list.
    package let passkeys: PasskeyService
    /// App Attest: challenges, attestations, assertions, debug tokens.
    package let appAttest: AppAttestService
    /// The audit log of support actions (it keeps no state of its own).
    public var audit: AuditLog { AuditLog(store: self.store, clock: self.clock, logger: self.logger) }
    let logger: Logger

    /// The services of a server whose issuer is `configuration.issuer`, over a database it opens (nothing is read from it yet).
    public static func make(
        configuration: LatchkeyConfiguration, clock: any WallClock = SystemClock(), logger: Logger
    ) async throws
        -> LatchkeyServices
    {
        try Self.validate(configuration)
        let database = try await Self.openDatabase(configuration, logger: logger)
        return try await Self.make(configuration: configuration, database: database, clock: clock, issuer: configuration.issuer, logger: logger)
    }

    /// Applies migrations, records the issuer (so CLI commands sign access codes the server accepts), loads the signing keys
    /// (creating the first), starts the revocation feed's cursor and lets the outbox sender read the outbox. Run once, before
    /// serving.
    public func prepare(recordingIssuer: Bool = true) async throws {
        try await Migrations.run(on: self.database, clock: self.clock, logger: self.logger)
        if recordingIssuer { try await self.store.setSetting("issuer", to: self.issuer) }
        try await self.keyRing.prepare()
        try await self.revocations.start()
        self.outboxSender?.open()
        self.webhooks.open()
        self.readiness.prepared()
    }

    /// What must run beside the HTTP server while it serves: the database's own service (PostgreSQL's connection pool,
    /// SQLite's checkpointer), the signing-key reloader, the revocation feed and the pruner.
    public var backgroundServices: [any Service] {
        [
            self.database,
            SigningKeyReloader(keyRing: self.keyRing, interval: self.configuration.keyReloadInterval, logger: self.logger),
            self.revocations, self.pruner, EventSweeper(hub: self.events),
            StoreChangeFeed(
                database: self.database, changes: self.store.changes, retryInterval: self.configuration.revocationPollInterval, logger: self.logger),
            self.webhooks,
        ] + (self.outboxSender.map { [$0] } ?? [])
    }

    /// Runs `body` with services prepared over the configured database, whose own service runs for the length of the call;
    /// closes the database afterwards. What the CLI uses.
    ///
    /// - Parameter recordIssuer: `serve` records its issuer; support commands read the recorded one (unless `public-url`
    ///   is set), so they sign what the server accepts.
    public static func withServices<T>(
        configuration: LatchkeyConfiguration, clock: any WallClock = SystemClock(), recordIssuer: Bool, logger: Logger,
        _ body: (LatchkeyServices) async throws -> T
    ) async throws -> T {
        try Self.validate(configuration)
        let database = try await Self.openDatabase(configuration, logger: logger)
        return try await database.whileRunning {
            do {
                try await Migrations.run(on: database, clock: clock, logger: logger)
            } catch StoreError.unavailable {
                // The pool only waits when PostgreSQL is away: a connection of its own says what failed.
                throw StoreError.unavailable(try await database.transientFailure()?.description ?? "no answer")
            }
            let recorded = recordIssuer || configuration.publicURL != nil ? nil : try await SQLLatchkeyStore(database: database).setting("issuer")
            let services = try await Self.make(
                configuration: configuration, database: database, clock: clock, issuer: recorded ?? configuration.issuer, logger: logger)
            try await services.prepare(recordingIssuer: recordIssuer)
            return try await body(services)
        }
    }

    /// Closes the database (its connections; the database's service ends when its task is cancelled).
    public func close() async { await self.database.close() }

    static func openDatabase(_ configuration: LatchkeyConfiguration, logger: Logger) async throws -> any LatchkeyDatabase {
        if configuration.usesPostgres {
            return PostgresLatchkeyDatabase(
                location: try PostgresLatchkeyDatabase.Location(url: configuration.database), timeout: configuration.databaseTimeout,
                maximumConnections: configuration.databaseMaxConnections, logger: logger)
        }
        return try await SQLiteLatchkeyDatabase(path: configuration.database, timeout: configuration.databaseTimeout, logger: logger)
    }
}
