import Configuration
import Foundation

/// Sign in with Apple (`apple.*`).
///
/// - `apple.client-ids`: the accepted `aud` values — the app's bundle ID and the Services ID (comma-separated);
///   empty switches Sign in with Apple off
/// - `apple.jwks-url` (default `https://appleid.apple.com/auth/keys`), `apple.token-url`
///   (`https://appleid.apple.com/auth/token`), `apple.revoke-url` (`https://appleid.apple.com/auth/revoke`)
/// - `apple.team-id`, `apple.key-id`, and `apple.private-key` (secret: the `.p8` PEM) or `apple.private-key-file`:
///   the Sign in with Apple key the client secret is signed with; without them authorization codes are refused
/// - `apple.leeway` (seconds, default 60): tolerated clock difference for `iat`
public struct AppleConfiguration: Sendable {
    public static let issuer = "https://appleid.apple.com"
    public var clientIDs: [String] = []
    public var jwksURL = "https://appleid.apple.com/auth/keys"
    public var tokenURL = "https://appleid.apple.com/auth/token"
    public var revokeURL = "https://appleid.apple.com/auth/revoke"
    public var teamID: String?
    public var keyID: String?
    /// The `.p8` key's PEM text.
    public var privateKeyPEM: String?
    public var leeway: TimeInterval = 60
    /// `apple.private-key-file` when it could not be read; ``LatchkeyServices`` refuses to start with it.
    var unreadableKeyFile: String?

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.clientIDs = reader.stringArray(forKey: "client-ids", default: [])
        self.jwksURL = reader.string(forKey: "jwks-url", default: defaults.jwksURL)
        self.tokenURL = reader.string(forKey: "token-url", default: defaults.tokenURL)
        self.revokeURL = reader.string(forKey: "revoke-url", default: defaults.revokeURL)
        self.teamID = reader.string(forKey: "team-id")
        self.keyID = reader.string(forKey: "key-id")
        let file = reader.string(forKey: "private-key-file")
        self.privateKeyPEM = reader.string(forKey: "private-key", isSecret: true) ?? file.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        if let file, self.privateKeyPEM == nil { self.unreadableKeyFile = file }
        self.leeway = reader.double(forKey: "leeway", default: defaults.leeway)
    }

    public var isEnabled: Bool { !self.clientIDs.isEmpty }
    /// Whether authorization codes can be exchanged (and Apple tokens revoked).
    public var canExchangeCodes: Bool { self.teamID != nil && self.keyID != nil && self.privateKeyPEM != nil }
}

/// A third-party identity provider (Clerk, Auth0, any OIDC issuer) whose tokens are accepted as Bearer
/// tokens (`providers.names` lists them; `providers.<name>.*` configures each):
///
/// - `issuer`: the exact `iss` of its tokens (required)
/// - `jwks-url`: where its public keys are, or `public-key`: a PEM RSA public key (one of the two)
/// - `audiences` (required): accepted `aud` values (comma-separated), one of which a token must carry; or `any` to
///   accept every audience (Clerk's session tokens carry none), which needs `authorized-parties`
/// - `authorized-parties`: accepted `azp` values. With `audiences: any` every token must carry one of them (nothing
///   else names the app a token is for); with named audiences a token that carries `azp` must name one (native clients
///   may omit `azp`, so such a token without it passes)
/// - `subject-claim` (default `sub`): the claim that identifies the user at the provider
/// - `algorithms` (default `RS256`): accepted `alg` values
/// - `token-type`: the `typ` header the provider's tokens carry; when set, a token must carry exactly it. When not
///   set, a `typ` other than `JWT` or `at+jwt` (an ID token's, a DPoP proof's, a logout token's…) is refused
/// - `leeway` (seconds, default 60)
public struct IdentityProviderConfiguration: Sendable {
    public var name: String
    public var issuer: String
    public var jwksURL: String?
    public var publicKeyPEM: String?
    /// Accepted `aud` values; empty with ``acceptsAnyAudience``.
    public var audiences: [String] = []
    /// `audiences` is `any`: every audience is accepted.
    public var acceptsAnyAudience = false
    /// The `typ` header the tokens must carry, when configured.
    public var tokenType: String?
    public var authorizedParties: [String] = []
    public var subjectClaim = "sub"
    public var algorithms: [String] = ["RS256"]
    public var leeway: TimeInterval = 60

    public init(name: String, issuer: String, jwksURL: String? = nil, publicKeyPEM: String? = nil) {
        self.name = name
        self.issuer = issuer
        self.jwksURL = jwksURL
        self.publicKeyPEM = publicKeyPEM
    }

    static func providers(reader: ConfigReader) -> (providers: [IdentityProviderConfiguration], problems: [String]) {
        var providers: [IdentityProviderConfiguration] = []
        var problems: [String] = []
        for name in reader.stringArray(forKey: "names", default: []) {
            // Every key of the provider is read before any is judged, so none of them counts as unknown at start.
            let key = { (setting: String) in ConfigKey([name, setting]) }
            let issuer = reader.string(forKey: key("issuer"))
            var provider = IdentityProviderConfiguration(
                name: name, issuer: issuer ?? "", jwksURL: reader.string(forKey: key("jwks-url")),
                publicKeyPEM: reader.string(forKey: key("public-key")))
            let audiences = reader.stringArray(forKey: key("audiences"), default: [])
            provider.tokenType = reader.string(forKey: key("token-type"))
            provider.authorizedParties = reader.stringArray(forKey: key("authorized-parties"), default: [])
            provider.subjectClaim = reader.string(forKey: key("subject-claim"), default: "sub")
            provider.algorithms = reader.stringArray(forKey: key("algorithms"), default: ["RS256"])
            provider.leeway = reader.double(forKey: key("leeway"), default: 60)
            guard let issuer, !issuer.isEmpty else {
                problems.append("providers.\(name).issuer is missing")
                continue
            }
            if provider.jwksURL == nil && provider.publicKeyPEM == nil {
                problems.append("providers.\(name) needs jwks-url or public-key")
                continue
            }
            if ["apple", "google", "latchkey"].contains(name) {
                problems.append("providers.\(name): the name is reserved")
                continue
            }
            if audiences.isEmpty {
                problems.append(
                    "providers.\(name).audiences is missing: name the aud values its tokens must carry, or set it to any to accept every audience")
                continue
            }
            provider.acceptsAnyAudience = audiences == ["any"]
            provider.audiences = provider.acceptsAnyAudience ? [] : audiences
            if provider.acceptsAnyAudience && provider.authorizedParties.isEmpty {
                problems.append(
                    "providers.\(name).audiences is any: set providers.\(name).authorized-parties to the azp values its tokens must carry, "
                        + "or name the audiences")
                continue
            }
            providers.append(provider)
        }
        return (providers, problems)
    }
}
