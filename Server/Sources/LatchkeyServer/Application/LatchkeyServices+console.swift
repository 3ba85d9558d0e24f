import Foundation

// The admin console's pieces, made from the services (the console itself never sees the whole set).

extension AdminRoutes {
    /// The console of `services`: cookies `Secure` when `admin.secure-cookies` says so, else when the console's URL is https.
    package init(services: LatchkeyServices) {
        let configuration = services.configuration
        let consoleURL = configuration.admin.publicURL ?? configuration.publicURL ?? ""
        self.init(
            console: ConsoleService(services: services), admin: services.admin,
            secureCookies: configuration.admin.secureCookies ?? consoleURL.lowercased().hasPrefix("https://"),
            trustedProxies: configuration.limits.trustedProxies, startedAt: services.clock.now())
    }
}

extension ConsoleService {
    package init(services: LatchkeyServices) {
        self.clock = services.clock
        self.store = services.store
        self.users = services.users
        self.sessions = services.sessions
        self.budgets = services.budgets
        self.accessCodes = services.accessCodes
        self.accounts = services.accounts
        self.secondFactors = services.secondFactors
        self.passkeys = services.passkeys
        self.keyRing = services.keyRing
        self.metrics = services.metrics
        self.audit = services.audit
        self.backend = services.backend
        self.outboxSender = services.outboxSender
        self.webhookEndpoints = services.configuration.webhooks.endpoints
        self.adminSetupBase = services.adminSetupLink(token: "")
    }
}

extension LatchkeyServices {
    /// The console's setup link for `token`: `admin.public-url`, else the public URL (or `http://host:admin.port` when the
    /// console has a port of its own), then `/admin/setup?token=`.
    package func adminSetupLink(token: String) -> String {
        let admin = self.configuration.admin
        var base = admin.publicURL ?? admin.port.map { "http://\(self.configuration.host):\($0)" } ?? self.issuer
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/admin/setup?token=" + token
    }
}
