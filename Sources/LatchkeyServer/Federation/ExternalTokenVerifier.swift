import Foundation
import LatchkeyAPI

/// Verifies tokens of the configured third-party identity providers (Clerk, any OIDC issuer) without a
/// network call once their keys are cached, and maps each provider subject to a Latchkey user — created
/// (kind `federated`, linked through the identities table) the first time the subject is seen.
@available(LatchkeyServer 1.0, *)
public final class ExternalTokenVerifier: Sendable {
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

    /// Verifies a provider's token and returns it as a Latchkey user's token; nil when its issuer is not a
    /// configured provider. Throws ``TokenRejection`` for a token that fails a check.
    func verify(_ token: String) async throws -> VerifiedToken? {
        guard let issuer = IdentityTokenVerifier.unverifiedIssuer(of: token), let provider = self.providers[issuer] else { return nil }
        let configuration = provider.configuration
        let type = try IdentityTokenVerifier.header(of: token).typ?.lowercased()
        if let expected = configuration.tokenType {
            guard type == expected.lowercased() else { throw TokenRejection.wrongType }
        } else if let type, !["jwt", "at+jwt", "application/at+jwt"].contains(type) {
            throw TokenRejection.wrongType
        }
        let claims = try await provider.verifier.verify(token)
        if !configuration.acceptsAnyAudience {
            guard claims.audiences.contains(where: configuration.audiences.contains) else { throw TokenRejection.wrongAudience }
        }
        if !configuration.authorizedParties.isEmpty, let party = claims.string("azp") {
            guard configuration.authorizedParties.contains(party) else { throw TokenRejection.unauthorizedParty }
        }
        guard let subject = claims.string(configuration.subjectClaim), !subject.isEmpty else { throw TokenRejection.missingSubject }
        let now = self.clock.now()
        let userID: String
        if let known = try await self.store.identity(provider: configuration.name, subject: subject) {
            userID = known.userID
        } else {
            let identity = FederatedIdentity(
                provider: configuration.name, subject: subject, userID: "", email: claims.string("email"), clientID: nil,
                sealedRefreshToken: nil, createdAt: now)
            switch try await self.store.signIn(identity, newUserID: UUID().uuidString.lowercased(), at: now) {
            case .existing(let id), .created(let id): userID = id
            }
        }
        let expiresAt = Int64(claims.seconds("exp") ?? 0)
        let issuedAt = Int64(claims.seconds("iat") ?? now.timeIntervalSince1970)
        return VerifiedToken(
            claims: AccessTokenClaims(
                issuer: issuer, audience: claims.audiences.first ?? "", subject: userID, sessionID: nil, issuedAt: issuedAt,
                notBefore: Int64(claims.seconds("nbf") ?? Double(issuedAt)), expiresAt: expiresAt, tokenID: claims.string("jti") ?? "",
                kind: .external, deviceID: nil),
            provider: configuration.name, providerSubject: subject)
    }
}
