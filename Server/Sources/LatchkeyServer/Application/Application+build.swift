import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The router of every Latchkey endpoint over `services`, and the OpenAPI document of exactly those endpoints at
/// `GET /openapi.json`.
///
/// Embedders can add their own routes to the returned router; put them behind ``BearerAuthenticator``
/// (and ``MeterMiddleware``) on a group of their own.
public func buildRouter(services: LatchkeyServices) -> Router<LatchkeyRequestContext> {
    buildAPI(services: services).router
}

/// The router and the operations it serves.
package func buildAPI(services: LatchkeyServices) -> (router: Router<LatchkeyRequestContext>, operations: [APIOperation]) {
    let configuration = services.configuration
    let router = Router(context: LatchkeyRequestContext.self)
    router.add(middleware: RequestLogMiddleware(metrics: services.metrics))
    // Outside the error middleware and the limits: a refusal (401, 413, 429…) is readable by an allowed browser origin too.
    if !configuration.corsAllowedOrigins.isEmpty { router.add(middleware: CORSMiddleware(allowedOrigins: Set(configuration.corsAllowedOrigins))) }
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: ReadinessGate(readiness: services.readiness))
    router.add(middleware: RequestLimitsMiddleware(maxBodySize: configuration.maxBodySize))
    let api = APIRoutes(router: router)
    let (limiter, limits, dpop, verifier) = (services.rateLimiter, configuration.limits, services.dpop, services.verifier)
    HealthRoutes(database: services.database, readiness: services.readiness).add(to: api)
    DiscoveryRoutes(keyRing: services.keyRing, verifier: verifier, issuer: services.issuer).add(to: api)
    // The association file's sections, each from the feature that needs it: passkeys' apps while passkeys are on.
    let passkeys = configuration.passkeys
    AppleAppSiteAssociationRoutes(document: .init(webcredentials: passkeys.isEnabled ? .init(apps: passkeys.appleAppIDs) : nil)).add(to: api)
    UserRoutes(users: services.users, sessions: services.sessions, verifier: verifier, dpop: dpop, limiter: limiter, limits: limits).add(to: api)
    AccountRoutes(
        account: AccountService(sessions: services.store, exports: services.store, budgets: services.budgets, clock: services.clock),
        sessions: services.sessions, verifier: verifier, dpop: dpop
    ).add(to: api)
    DeviceRoutes(devices: services.devices, dpop: dpop, limiter: limiter, limits: limits).add(to: api)
    GuestRoutes(guests: services.guests, limiter: limiter, limits: limits).add(to: api)
    SessionRoutes(sessions: services.sessions, verifier: verifier, dpop: dpop, limiter: limiter, limits: limits).add(to: api)
    AccessCodeRoutes(accessCodes: services.accessCodes, dpop: dpop, limiter: limiter, limits: limits).add(to: api)
    FederationRoutes(
        federation: services.federation, sessions: services.sessions, verifier: verifier, dpop: dpop, limiter: limiter, limits: limits,
        accounts: configuration.email.isEnabled ? services.accounts : nil
    ).add(to: api)
    StorageRoutes(storage: services.storage, verifier: verifier, devices: services.store, limiter: limiter, limits: limits).add(to: api)
    EmailAccountRoutes(
        accounts: configuration.email.isEnabled ? services.accounts : nil, verifier: verifier, dpop: dpop, limiter: limiter,
        limits: configuration.accountLimits, trustedProxies: limits.trustedProxies,
        pages: PersonPages(templates: services.accounts.templates.pages, appName: configuration.email.appName)
    ).add(to: api)
    SecondFactorRoutes(
        secondFactors: services.secondFactors, verifier: verifier, dpop: dpop, limiter: limiter, policy: configuration.mfa,
        trustedProxies: limits.trustedProxies
    ).add(to: api)
    PasskeyRoutes(
        passkeys: services.passkeys, verifier: verifier, dpop: dpop, limiter: limiter, trustedProxies: limits.trustedProxies
    ).add(to: api)
    AppAttestRoutes(appAttest: services.appAttest, limiter: limiter, trustedProxies: limits.trustedProxies).add(to: api)
    UsageRoutes(budgets: services.budgets).add(to: api)
    BackendRoutes(
        backend: services.backend,
        keys: BackendKeys(
            single: configuration.backend.serviceKey, named: configuration.backendServiceKeys.map { ($0.name, $0.key) })
    ).add(to: api)
    EventRoutes(hub: services.events, verifier: verifier, limiter: limiter, limits: limits, configuration: configuration.events).add(to: api)
    AuthorizeRoutes(
        rules: configuration.authorizationRules, meters: configuration.meters, verifier: verifier, limiter: limiter,
        trustedProxies: limits.trustedProxies, proxy: configuration.authorizeProxy, caseSensitive: configuration.authorizeCaseSensitive,
        guestPerNetwork: limits.guestPerNetwork, unattestedGuestLimit: configuration.appAttest.unattestedGuestMeterLimit
    ).add(to: api)
    if configuration.admin.enabled && configuration.admin.port == nil { AdminRoutes(services: services).add(to: router) }
    let operations = OperationsRoutes(metrics: services.metrics, token: configuration.metricsToken)
    // Served on the API's port only behind metrics.token: metrics tell who is busy and when, so never to everyone.
    if configuration.metricsPort == nil && configuration.metricsToken != nil { operations.addMetrics(to: api) }
    let document = DocumentHolder()
    operations.addDocument({ document.bytes }, to: api)
    document.set(api.operations)
    return (router, api.operations)
}

/// A Latchkey server over `services`, listening on the configured host and port: one `ServiceGroup` runs the HTTP
/// server and ``LatchkeyServices/backgroundServices`` (the database's own service, key reloads, the revocation feed,
/// pruning), and ``LatchkeyServices/prepare()`` runs before the server listens. With `metrics.port` set, `GET /metrics`
/// is served by a second listener on that port.
///
/// On PostgreSQL the server listens at once and prepares beside it, trying again with backoff while the database is
/// away (each attempt logged with its reason; `GET /api/v1/health/ready` answers 503 with it, other routes 503 too), so
/// an orchestrator may start both together; a failure waiting cannot cure (authentication, a missing database, TLS
/// refused) ends the server. On SQLite it prepares before it listens.
public func buildApplication(services: LatchkeyServices, logger: Logger) -> some ApplicationProtocol {
    guard services.configuration.usesPostgres else {
        return buildApplication(services: services, background: services.backgroundServices, logger: logger)
    }
    let database = services.database
    let rest = services.backgroundServices.filter { $0 as AnyObject !== database as AnyObject }
    return buildApplication(
        services: services, background: [database, Preparer(services: services, then: rest)], preparing: false, logger: logger)
}

/// ``buildApplication(services:logger:)`` with the background services given, preparing the services before it listens
/// unless `preparing` is false (tests run the database's service and prepare the services themselves).
package func buildApplication(
    services: LatchkeyServices, background: [any Service], preparing: Bool = true, logger: Logger
)
    -> some ApplicationProtocol
{
    let configuration = services.configuration
    var background = background
    if configuration.metricsPort == nil && configuration.metricsToken == nil {
        logger.notice("GET /metrics is not served: set metrics.port (a port of its own) or metrics.token (a Bearer token) to serve it")
    }
    if let port = configuration.metricsPort {
        let router = Router(context: LatchkeyRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        OperationsRoutes(metrics: services.metrics, token: configuration.metricsToken).addMetrics(to: router)
        background.append(
            Application(
                router: router, server: .guarded(ConnectionGuards(configuration: configuration)),
                configuration: .init(address: .hostname(configuration.host, port: port), serverName: "latchkey-metrics"), logger: logger))
    }
    if configuration.admin.enabled, let port = configuration.admin.port {
        // The console on a port of its own (firewalled apart): the same request log, error handling and connection guards
        // (its own http.max-connections, so a flood of the API's port leaves the console reachable), nothing else.
        let router = Router(context: LatchkeyRequestContext.self)
        router.add(middleware: RequestLogMiddleware(metrics: services.metrics))
        router.add(middleware: ErrorMiddleware())
        AdminRoutes(services: services).add(to: router)
        background.append(
            Application(
                router: router, server: .guarded(ConnectionGuards(configuration: configuration)),
                configuration: .init(address: .hostname(configuration.host, port: port), serverName: "latchkey-admin"), logger: logger))
    }
    let responder = buildRouter(services: services).buildResponder()
    var application = Application(
        responder: responder,
        server: EventSocketServer.builder(
            responder: responder, hub: services.events, trustedProxies: configuration.limits.trustedProxies,
            guards: ConnectionGuards(configuration: configuration)),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "latchkey"),
        services: background,
        logger: logger)
    if preparing { application.beforeServerStarts { try await services.prepare() } }
    return application
}

/// The OpenAPI document of `operations`, as served at `GET /openapi.json`.
package func apiDocument(of operations: [APIOperation]) throws -> Data {
    try APIDocumentBuilder(operations: operations, version: HealthRoutes.version).json()
}

/// The API document's bytes, built at the first request for it (the document describes its own route too, so the
/// operations are set once the router is complete).
private final class DocumentHolder: Sendable {
    private let state = Mutex<(operations: [APIOperation], bytes: ByteBuffer?)>(([], nil))

    func set(_ operations: [APIOperation]) { self.state.withLock { $0 = (operations, nil) } }

    var bytes: ByteBuffer {
        self.state.withLock { state in
            if let bytes = state.bytes { return bytes }
            let bytes = ByteBuffer(bytes: (try? apiDocument(of: state.operations)) ?? Data("{}".utf8))
            state.bytes = bytes
            return bytes
        }
    }
}

/// Reloads the signing keys from the database every `interval` seconds (more than 0: checked at start).
package struct SigningKeyReloader: Service {
    let keyRing: SigningKeyRing
    let interval: Double
    let logger: Logger

    package func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(self.interval)) }
            } catch { return }
            do { try await self.keyRing.reload() } catch {
                self.logger.error("reloading signing keys failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

extension ConnectionGuards {
    /// The guards of one listener as the configuration sets them, with a connection count of its own.
    init(configuration: LatchkeyConfiguration) {
        self.init(
            idleTimeout: configuration.idleTimeout, headerTimeout: configuration.headerTimeout, maxConnections: configuration.maxConnections)
    }
}
