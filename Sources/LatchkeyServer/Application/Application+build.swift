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
    let limit = services.configuration.maxBodySize
    let (limiter, limits) = (services.rateLimiter, services.configuration.limits)
    let api = router.group("api/v1")
    let authenticated = router.group("api/v1").add(middleware: BearerAuthenticator(verifier: services.verifier))

    HealthRoutes(database: services.database).add(to: api)
    UserRoutes(users: services.users, maxBodySize: limit).add(public: api, authenticated: authenticated)
    DeviceRoutes(devices: services.devices, maxBodySize: limit, limiter: limiter, limits: limits).add(to: api)
    GuestRoutes(guests: services.guests, limiter: limiter, limits: limits).add(to: api)
    SessionRoutes(sessions: services.sessions, maxBodySize: limit, limiter: limiter, limits: limits).add(public: api, authenticated: authenticated)
    TokenRoutes(verifier: services.verifier).add(to: api)
    UsageRoutes(budgets: services.budgets, maxBodySize: limit).add(to: api)
    AuthorizeRoutes(
        rules: services.configuration.authorizationRules, meters: services.configuration.meters, verifier: services.verifier,
        limiter: limiter, trustedProxies: limits.trustedProxies
    ).add(to: api)
    FederationRoutes(
        federation: services.federation, users: services.users, verifier: services.verifier, maxBodySize: limit, limiter: limiter, limits: limits)
        .add(public: api, authenticated: authenticated)
    AccessCodeRoutes(accessCodes: services.accessCodes, maxBodySize: limit, limiter: limiter, limits: limits).add(to: api)
    DiscoveryRoutes(keyRing: services.keyRing, issuer: services.issuer).add(to: router)
    OperationsRoutes(metrics: services.metrics).add(to: router)
    return router
}

/// A Latchkey server over `services`, listening on the configured host and port.
///
/// It runs ``SigningKeyReloader`` and ``RevocationFeed`` beside the HTTP server, so keys rotated and
/// sessions revoked by the CLI (or by another process on the same database) take effect without a restart.
@available(LatchkeyServer 1.0, *)
public func buildApplication(services: LatchkeyServices, logger: Logger) -> some ApplicationProtocol {
    let configuration = services.configuration
    return Application(
        router: buildRouter(services: services),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "latchkey"),
        services: [
            SigningKeyReloader(keyRing: services.keyRing, interval: configuration.keyReloadInterval, logger: logger),
            services.revocations,
        ] + ((services.database as? SQLiteLatchkeyDatabase).map { [$0.checkpointer(logger: logger)] } ?? []),
        logger: logger)
}

/// Reloads the signing keys from the database every `interval` seconds.
@available(LatchkeyServer 1.0, *)
public struct SigningKeyReloader: Service {
    let keyRing: SigningKeyRing
    let interval: Double
    let logger: Logger

    public func run() async throws {
        guard self.interval > 0 else { return }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(self.interval)) }
            } catch { return }
            do { try await self.keyRing.reload() } catch {
                self.logger.error("reloading signing keys failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
