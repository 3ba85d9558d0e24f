import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import Logging

/// Verifies tokens of the configured third-party identity providers (Clerk, any OIDC issuer) without a
/// network call once their keys are cached, and maps each provider subject to a Latchkey user — created
/// (kind `federated`, linked through the identities table) the first time the subject is seen.
package final class ExternalTokenVerifier: ExternalTokenVerifying {
    struct Provider: Sendable {
        let configuration: IdentityProviderConfiguration
        let verifier: IdentityTokenVerifier
    }

    let providers: [String: Provider]
    let store: any IdentityStore
    let clock: any WallClock

    init(providers: [Provider], store: any IdentityStore, clock: any WallClock) {
        self.providers = Dictionary(providers.map { ($0.configuration.issuer, $0) }, uniquingKeysWith: { first, _ in first })
        self.store = store
        self.clock = clock
    }

    /// The verifier of `configurations`: keys from each JWKS URL (fetched on first use, then cached, never through a
    /// redirect) or PEM key.
    static func make(
        _ configurations: [IdentityProviderConfiguration], store: any IdentityStore, clock: any WallClock, logger: Logger
    ) async throws -> ExternalTokenVerifier {
        var providers: [Provider] = []
        for provider in configurations {
            let keys: any IdentityKeySource =
                if let url = provider.jwksURL {
                    JWKSCache(url: url, http: .keyFetching, clock: clock, logger: logger)
                } else {
                    try await StaticKeySource.rsa(pem: provider.publicKeyPEM ?? "")
                }
            providers.append(
                Provider(
                    configuration: provider,
                    verifier: IdentityTokenVerifier(
                        keys: keys, issuer: provider.issuer, algorithms: Set(provider.algorithms), clock: clock, leeway: provider.leeway)))
        }
        return ExternalTokenVerifier(providers: providers, store: store, clock: clock)
    }

    /// A provider's token whose signature and claims passed every check, not yet mapped to a Latchkey user.
    struct VerifiedIdentity: Sendable {
        let provider: IdentityProviderConfiguration
        let subject: String
        let email: String?
        let claims: IdentityClaims

        func identity(at time: Date) -> FederatedIdentity {
            FederatedIdentity(
                provider: self.provider.name, subject: self.subject, userID: "", email: self.email, clientID: nil, sealedRefreshToken: nil,
                createdAt: time)
        }
    }

    /// Checks a provider's token — issuer, `typ`, signature, times, audience, authorized party, subject — without
    /// touching the database; nil when its issuer is not a configured provider. Throws ``TokenRejection`` for a token
    /// that fails a check.
    func identify(_ token: String) async throws -> VerifiedIdentity? {
        guard let issuer = IdentityTokenVerifier.unverifiedIssuer(of: token), let provider = self.providers[issuer] else { return nil }
        let configuration = provider.configuration
        let type = try JOSEHeader(of: token).typ?.lowercased()
        if let expected = configuration.tokenType {
            guard type == expected.lowercased() else { throw TokenRejection.wrongType }
        } else if let type, !["jwt", "at+jwt", "application/at+jwt"].contains(type) {
            throw TokenRejection.wrongType
        }
        let claims = try await provider.verifier.verify(token)
        if !configuration.acceptsAnyAudience {
            guard claims.audiences.contains(where: configuration.audiences.contains) else { throw TokenRejection.wrongAudience }
        }
        if configuration.acceptsAnyAudience {
            // No audience names the app this token is for, so its authorized party must: a token without azp is refused.
            guard let party = claims.string("azp"), configuration.authorizedParties.contains(party) else { throw TokenRejection.unauthorizedParty }
        } else if !configuration.authorizedParties.isEmpty, let party = claims.string("azp") {
            guard configuration.authorizedParties.contains(party) else { throw TokenRejection.unauthorizedParty }
        }
        guard let subject = claims.string(configuration.subjectClaim), !subject.isEmpty else { throw TokenRejection.missingSubject }
        return VerifiedIdentity(provider: configuration, subject: subject, email: claims.string("email"), claims: claims)
    }

    /// Verifies a provider's token and returns it as a Latchkey user's token — creating the user the first time its
    /// subject is seen; nil when its issuer is not a configured provider. Throws ``TokenRejection`` for a token that
    /// fails a check.
    package func verify(_ token: String) async throws -> VerifiedToken? {
        guard let verified = try await self.identify(token) else { return nil }
        let now = self.clock.now()
        let userID: String
        if let known = try await self.store.identity(provider: verified.provider.name, subject: verified.subject) {
            userID = known.userID
        } else {
            switch try await self.store.signIn(verified.identity(at: now), newUserID: UUID().uuidString.lowercased(), at: now) {
            case .existing(let id), .created(let id): userID = id
            }
        }
        return Self.token(of: verified, userID: userID, now: now)
    }

    /// The verified token of `verified`, standing for the user `userID`.
    static func token(of verified: VerifiedIdentity, userID: String, now: Date) -> VerifiedToken {
        let claims = verified.claims
        let issuedAt = Int64(claims.seconds("iat") ?? now.timeIntervalSince1970)
        return VerifiedToken(
            claims: AccessTokenClaims(
                issuer: verified.provider.issuer, audience: claims.audiences.first ?? "", subject: userID, sessionID: nil,
                issuedAt: issuedAt, notBefore: Int64(claims.seconds("nbf") ?? Double(issuedAt)), expiresAt: Int64(claims.seconds("exp") ?? 0),
                tokenID: claims.string("jti") ?? "", kind: .external, deviceID: nil),
            provider: verified.provider.name, providerSubject: verified.subject)
    }
}
