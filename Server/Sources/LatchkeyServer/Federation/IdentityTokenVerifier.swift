import Foundation
import JWTKit

/// The checks every identity provider's token gets before anything provider-specific: an accepted
/// algorithm named in the header (so `alg: none`, HMAC-with-the-public-key and ES/RS swaps never reach a
/// key), a published `kid`, the signature, the exact issuer (one of `issuers`), `exp` (passed by more than
/// `expiryLeeway`), and `nbf`/`iat` not in the future beyond `leeway` — all against the injected clock.
struct IdentityTokenVerifier: Sendable {
    let keys: any IdentityKeySource
    let issuers: Set<String>
    let algorithms: Set<String>
    let clock: any WallClock
    /// Tolerated clock difference with the provider, seconds.
    let leeway: TimeInterval
    /// Seconds a token is still taken after its `exp` (Google's tokens: `google.leeway`; others: none).
    let expiryLeeway: TimeInterval

    init(
        keys: any IdentityKeySource, issuers: Set<String>, algorithms: Set<String>, clock: any WallClock, leeway: TimeInterval,
        expiryLeeway: TimeInterval = 0
    ) {
        (self.keys, self.issuers, self.algorithms, self.clock) = (keys, issuers, algorithms, clock)
        (self.leeway, self.expiryLeeway) = (leeway, expiryLeeway)
    }

    init(keys: any IdentityKeySource, issuer: String, algorithms: Set<String>, clock: any WallClock, leeway: TimeInterval) {
        self.init(keys: keys, issuers: [issuer], algorithms: algorithms, clock: clock, leeway: leeway)
    }

    func verify(_ token: String) async throws -> IdentityClaims {
        let header = try JOSEHeader(of: token)
        guard let algorithm = header.alg, self.algorithms.contains(algorithm) else { throw TokenRejection.unsupportedAlgorithm }
        let collection = try await self.keys.keys(for: header.kid)
        let claims: IdentityClaims
        do {
            claims = try await collection.verify(token, as: IdentityClaims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw TokenRejection.malformed
        } catch is DecodingError {
            throw TokenRejection.malformed
        } catch {
            throw TokenRejection.badSignature
        }
        guard let issuer = claims.string("iss"), self.issuers.contains(issuer) else { throw TokenRejection.wrongIssuer }
        let now = self.clock.now().timeIntervalSince1970
        guard let expiresAt = claims.seconds("exp") else { throw TokenRejection.malformed }
        guard expiresAt + self.expiryLeeway > now else { throw TokenRejection.expired }
        if let notBefore = claims.seconds("nbf"), notBefore > now + self.leeway { throw TokenRejection.notYetValid }
        if let issuedAt = claims.seconds("iat"), issuedAt > now + self.leeway { throw TokenRejection.issuedInTheFuture }
        return claims
    }

    /// The `iss` claim before any verification, to choose the verifier; nil when unreadable.
    static func unverifiedIssuer(of token: String) -> String? { self.unverifiedClaim("iss", of: token) }

    /// A string claim read without verifying anything: only for choosing a verifier, or for tokens that
    /// came straight from the provider over TLS.
    static func unverifiedClaim(_ name: String, of token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Data(base64URLEncoded: String(parts[1])),
            let payload = try? JSONDecoder().decode([String: ClaimValue].self, from: data), case .string(let value) = payload[name]
        else { return nil }
        return value
    }
}
