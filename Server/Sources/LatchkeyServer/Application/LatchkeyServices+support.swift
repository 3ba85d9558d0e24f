import Crypto
import Foundation
import JWTKit
import Logging

extension LatchkeyServices {
    /// Revokes the signing key `kid` at once (a leaked key): tokens it signed stop working here at once and in every
    /// other process through the revocation feed, and it leaves the JWKS. False when there is no such key.
    package func revokeSigningKey(kid: String) async throws -> Bool {
        try await self.keyRing.revoke(kid: kid)
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
    public typealias ConfigurationError = LatchkeyConfigurationError

    /// A fresh random master key, as base64 text for `master-key`.
    public static func newMasterKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// A fresh webhook endpoint secret: `whsec_` and base64 of 32 random bytes (`latchkey webhooks secret`).
    public static func newWebhookSecret() -> String { WebhookSignature.newSecret() }

    /// Writes a fresh master key to a new file at `path`, mode 0600 from the first instant; false when a file is there
    /// or it cannot be written.
    package static func writeNewMasterKey(toFile path: String) -> Bool {
        writeExclusively(path, Self.newMasterKey() + "\n", mode: 0o600)
    }

    static func masterKey(_ configuration: LatchkeyConfiguration) throws -> MasterKey {
        if let text = configuration.masterKey { return try MasterKey(base64: text) }
        if let file = configuration.masterKeyFile { return try MasterKey.loadOrCreate(filePath: file) }
        return try MasterKey.loadOrCreate(filePath: MasterKey.defaultFilePath(forDatabase: configuration.database))
    }

    /// Checks settings that parse but do not make sense together (`latchkey config check`, and every start).
    public static func validate(_ configuration: LatchkeyConfiguration) throws {
        if let problem = configuration.invalidProviders.first ?? configuration.invalidSettings.first {
            throw ConfigurationError(description: problem)
        }
        if let problem = configuration.storage.problems.first ?? configuration.events.problems.first ?? configuration.email.problems.first
            ?? configuration.admin.problems.first ?? configuration.passkeys.problems.first ?? configuration.appAttest.problems.first
            ?? configuration.claims.problems.first
            ?? configuration.backend.problems.first ?? configuration.webhooks.problems.first ?? configuration.backendServiceKeyProblems.first
        {
            throw ConfigurationError(description: problem)
        }
        if configuration.guestAudience == configuration.audience {
            throw ConfigurationError(description: "guest-audience must differ from audience, so guest tokens are told apart from users' tokens")
        }
        let intervals: [(String, TimeInterval)] = [
            ("keys.reload-interval", configuration.keyReloadInterval), ("revocations.poll-interval", configuration.revocationPollInterval),
            ("prune.interval", configuration.pruneInterval), ("http.idle-timeout", configuration.idleTimeout),
            ("http.header-timeout", configuration.headerTimeout),
        ]
        for (key, seconds) in intervals where !(seconds > 0 && seconds.isFinite) {
            throw ConfigurationError(description: "\(key) must be a number of seconds above 0")
        }
        for origin in configuration.corsAllowedOrigins {
            guard let url = URLComponents(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host?.isEmpty == false,
                url.path.isEmpty, url.query == nil, url.fragment == nil, origin != "*"
            else {
                throw ConfigurationError(
                    description:
                        "http.cors.allowed-origins: \"\(origin)\" is not an origin: write scheme://host[:port], such as https://app.example.com")
            }
        }
        if configuration.maxConnections < 1 { throw ConfigurationError(description: "http.max-connections must be 1 or more") }
        if !(configuration.profileCacheTTL >= 0 && configuration.profileCacheTTL <= 60) {
            throw ConfigurationError(description: "cache.profile-ttl must be 0 (off) to 60 seconds")
        }
        if configuration.profileCacheCapacity < 0 {
            throw ConfigurationError(description: "cache.profile-capacity must be 0 (off) or more")
        }
        if let port = configuration.metricsPort, port == configuration.port && port != 0 {
            throw ConfigurationError(description: "metrics.port must differ from port")
        }
        for provider in configuration.identityProviders where provider.audiences.isEmpty && !provider.acceptsAnyAudience {
            throw ConfigurationError(description: "providers.\(provider.name).audiences is missing: name the accepted aud values, or any")
        }
        for provider in configuration.identityProviders where provider.acceptsAnyAudience && provider.authorizedParties.isEmpty {
            throw ConfigurationError(description: "providers.\(provider.name).audiences is any: set authorized-parties (the azp its tokens carry)")
        }
        let appleKeys = configuration.apple.isEnabled ? [configuration.apple.jwksURL] : []
        let googleKeys = configuration.google.isEnabled ? [configuration.google.jwksURL] : []
        for url in configuration.identityProviders.compactMap(\.jwksURL) + appleKeys + googleKeys {
            guard Self.isSecureFetchURL(url) else {
                throw ConfigurationError(description: "\(url): keys are fetched over https only (http is allowed for loopback addresses)")
            }
        }
        if !(configuration.google.leeway >= 0 && configuration.google.leeway <= 3600) {
            throw ConfigurationError(description: "google.leeway must be 0 to 3600 seconds")
        }
        if let file = configuration.apple.unreadableKeyFile {
            throw ConfigurationError(description: "apple.private-key-file: cannot read \(file) (the .p8 file Apple gives you)")
        }
        if let pem = configuration.apple.privateKeyPEM, (try? ES256PrivateKey(pem: pem)) == nil {
            throw ConfigurationError(description: "apple.private-key: not a PEM EC P-256 private key (the .p8 file Apple gives you)")
        }
        let issuers = configuration.identityProviders.map(\.issuer)
        if Set(issuers).count != issuers.count || issuers.contains(configuration.issuer) || issuers.contains(AppleConfiguration.issuer)
            || (configuration.google.isEnabled && !GoogleConfiguration.issuers.isDisjoint(with: issuers))
        {
            throw ConfigurationError(
                description:
                    "providers.*.issuer: every provider needs an issuer of its own (not Latchkey's, Apple's or, with google.client-ids, Google's)"
            )
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
                description:
                    "authorize.routes: cannot read \"\(bad)\"; write \"<METHOD or *> <path prefix> <public|device|bearer|user> [<meter>] [token=query]\""
            )
        }
        for rule in configuration.authorizationRules {
            if let meter = rule.meter, configuration.meters[meter] == nil {
                throw ConfigurationError(description: "authorize.routes: no meter named \(meter) (configured: \(configuration.meters.keys.sorted()))")
            }
        }
    }
}
