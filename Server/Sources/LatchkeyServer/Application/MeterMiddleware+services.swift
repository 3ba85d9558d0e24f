extension MeterMiddleware {
    /// Meters with the configured meter `meter` (a name under `meters.`); a name not configured is a programming error.
    public init(meter name: String, services: LatchkeyServices) {
        guard let meter = services.configuration.meters[name] else { preconditionFailure("no meter named \(name) is configured") }
        let limits = services.configuration.limits
        self.init(
            meter: meter, limiter: services.rateLimiter, trustedProxies: limits.trustedProxies, guestPerNetwork: limits.guestPerNetwork,
            unattestedGuestLimit: services.configuration.appAttest.unattestedGuestMeterLimit)
    }
}
