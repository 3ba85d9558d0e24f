import Hummingbird
import Logging
import ServiceLifecycle

/// The router of every Latchkey endpoint over `services`.
///
/// Embedders can add their own routes to the returned router; put them behind ``BearerAuthenticator``
/// by adding them to a group as `buildRouter` does for `/api/v1/auth/me`.
@available(LatchkeyServer 1.0, *)
public func buildRouter(services: LatchkeyServices) -> Router<LatchkeyRequestContext> {
    let router = Router(context: LatchkeyRequestContext.self)
    router.add(middleware: RequestLogMiddleware(metrics: services.metrics))
    router.add(middleware: ErrorMiddleware())
    let configuration = services.configuration
    let limit = configuration.maxBodySize
    let (limiter, limits, dpop) = (services.rateLimiter, configuration.limits, services.dpop)
    let bearer = BearerAuthenticator(verifier: services.verifier)
    let api = router.group("api/v1")
    let authenticated = router.group("api/v1").add(middleware: bearer)
    // The routes that take DPoP proofs answer with the nonce the next proof must carry.
    let nonce = DPoPNonceMiddleware<LatchkeyRequestContext>(nonces: dpop.nonces, clock: services.clock)
    let proving = router.group("api/v1").add(middleware: nonce)
    let provingAuthenticated = router.group("api/v1").add(middleware: nonce).add(middleware: bearer)

    HealthRoutes(database: services.database).add(to: api)
    UserRoutes(users: services.users, maxBodySize: limit, limiter: limiter, limits: limits).add(public: api, authenticated: authenticated)
    DeviceRoutes(devices: services.devices, dpop: dpop, maxBodySize: limit, limiter: limiter, limits: limits).add(to: proving)
    GuestRoutes(guests: services.guests, limiter: limiter, limits: limits).add(to: api)
    SessionRoutes(sessions: services.sessions, dpop: dpop, maxBodySize: limit, limiter: limiter, limits: limits)
        .add(public: proving, authenticated: authenticated)
    TokenRoutes(verifier: services.verifier).add(to: api)
    UsageRoutes(budgets: services.budgets, maxBodySize: limit).add(to: api)
    AuthorizeRoutes(
        rules: configuration.authorizationRules, meters: configuration.meters, verifier: services.verifier, limiter: limiter,
        trustedProxies: limits.trustedProxies, proxy: configuration.authorizeProxy
    ).add(to: api)
    FederationRoutes(
        federation: services.federation, users: services.users, sessions: services.sessions, verifier: services.verifier, dpop: dpop,
        maxBodySize: limit, limiter: limiter, limits: limits
    ).add(public: proving, authenticated: provingAuthenticated)
    AccessCodeRoutes(accessCodes: services.accessCodes, dpop: dpop, maxBodySize: limit, limiter: limiter, limits: limits).add(to: proving)
    DiscoveryRoutes(keyRing: services.keyRing, issuer: services.issuer).add(to: router)
    let operations = OperationsRoutes(metrics: services.metrics, token: configuration.metricsToken)
    operations.addDocument(to: router)
    if configuration.metricsPort == nil { operations.addMetrics(to: router) }
    return router
}

/// A Latchkey server over `services`, listening on the configured host and port.
///
/// It runs ``SigningKeyReloader``, ``RevocationFeed`` and ``StorePruner`` beside the HTTP server, so keys rotated and
/// sessions revoked by the CLI (or by another process on the same database) take effect without a restart, and
/// the database stays bounded. With `metrics.port` set, `GET /metrics` is served on that port instead.
@available(LatchkeyServer 1.0, *)
public func buildApplication(services: LatchkeyServices, logger: Logger) -> some ApplicationProtocol {
    let configuration = services.configuration
    var background: [any Service] = [
        SigningKeyReloader(keyRing: services.keyRing, interval: configuration.keyReloadInterval, logger: logger),
        services.revocations, services.pruner,
    ]
    if let sqlite = services.database as? SQLiteLatchkeyDatabase { background.append(sqlite.checkpointer(logger: logger)) }
    if let port = configuration.metricsPort {
        let router = Router(context: LatchkeyRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        OperationsRoutes(metrics: services.metrics, token: configuration.metricsToken).addMetrics(to: router)
        background.append(
            Application(
                router: router, configuration: .init(address: .hostname(configuration.host, port: port), serverName: "latchkey-metrics"),
                logger: logger))
    }
    return Application(
        router: buildRouter(services: services),
        server: .http1(configuration: .init(idleTimeout: .nanoseconds(Int64(configuration.idleTimeout * 1_000_000_000)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "latchkey"),
        services: background,
        logger: logger)
}

/// Reloads the signing keys from the database every `interval` seconds (more than 0: checked at start).
@available(LatchkeyServer 1.0, *)
public struct SigningKeyReloader: Service {
    let keyRing: SigningKeyRing
    let interval: Double
    let logger: Logger

    public func run() async throws {
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
