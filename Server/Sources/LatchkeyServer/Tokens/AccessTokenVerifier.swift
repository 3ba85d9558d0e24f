import Foundation
import JWTKit
import LatchkeyAPI
import Logging

/// Decides whether a bearer token is a live Latchkey token.
///
/// A token seen before is answered from ``TokenVerificationCache``; otherwise the header is checked
/// (ES256 with the `kid` of one of our keys — an unknown `kid` never falls back to another key — and `typ` `at+jwt`
/// when present, so `alg: none`, algorithm swaps and other kinds of JWT never reach a key), the signature verified,
/// the claims checked against the injected clock (a guest token must carry the guest audience, any other the
/// audience), and the session or access code looked up so that a revoked one is refused.
public final class AccessTokenVerifier: Sendable {
    let keyRing: SigningKeyRing
    let cache: TokenVerificationCache
    let sessions: any SessionLookup
    let accessCodes: any AccessCodeLookup
    /// Tokens of configured third-party identity providers (Clerk, OIDC); nil when none is configured.
    let external: (any ExternalTokenVerifying)?
    let issuer: String
    let audience: String
    let guestAudience: String
    let clock: any WallClock
    /// Tolerated difference between this server's clock and the one that signed (several processes).
    let leeway: TimeInterval = 5

    init(
        keyRing: SigningKeyRing, cache: TokenVerificationCache, sessions: any SessionLookup, accessCodes: any AccessCodeLookup,
        external: (any ExternalTokenVerifying)? = nil, issuer: String, audience: String, guestAudience: String, clock: any WallClock
    ) {
        self.external = external
        self.keyRing = keyRing
        self.cache = cache
        self.sessions = sessions
        self.accessCodes = accessCodes
        self.issuer = issuer
        self.audience = audience
        self.guestAudience = guestAudience
        self.clock = clock
    }

    /// Verifies `token` or throws a ``TokenRejection`` (or a ``StoreError`` when the database is down).
    public func verify(_ token: String) async throws -> VerifiedToken {
        let now = self.clock.now()
        if let cached = self.cache.lookup(token, now: now) {
            // Codes are revoked from the CLI, another process: look at the database on every use.
            if cached.kind == .accessCode { try await self.checkNotRevoked(cached) }
            return cached
        }
        if let verified = try await self.external?.verify(token) {
            self.cache.insert(token, verified: verified, now: now)
            return verified
        }
        let (claims, kid) = try await self.verifySignature(token)
        let verified = VerifiedToken(claims: claims, keyID: kid)
        try self.checkClaims(claims, now: now)
        try await self.checkNotRevoked(verified)
        self.cache.insert(token, verified: verified, now: now)
        return verified
    }

    private func verifySignature(_ token: String) async throws -> (claims: AccessTokenClaims, keyID: String) {
        let header = try JOSEHeader(of: token)
        guard header.alg == "ES256", let kid = header.kid else { throw TokenRejection.unsupportedAlgorithm }
        if let type = header.typ, !["at+jwt", "application/at+jwt"].contains(type.lowercased()) { throw TokenRejection.wrongType }
        if !self.keyRing.knows(kid: kid) {
            await self.keyRing.reloadForUnknownKID(minimumInterval: 1)
            // jwt-kit would try its default key for a kid it lacks: a kid we do not publish is refused here.
            guard self.keyRing.knows(kid: kid) else { throw TokenRejection.unknownKey }
        }
        do {
            return (try await self.keyRing.current.collection.verify(token, as: SignedClaims.self).claims, kid)
        } catch let error as JWTError where error.errorType == .malformedToken || error.errorType == .claimVerificationFailure {
            throw TokenRejection.malformed
        } catch is DecodingError {
            throw TokenRejection.malformed
        } catch {
            throw TokenRejection.badSignature
        }
    }

    private func checkClaims(_ claims: AccessTokenClaims, now: Date) throws {
        guard claims.issuer == self.issuer else { throw TokenRejection.wrongIssuer }
        // `TokenKind` is open for clients; this server signs only the kinds it knows, so any other is not one of its tokens.
        guard TokenKind.allCases.contains(claims.kind), claims.kind != .external else { throw TokenRejection.malformed }
        guard claims.audience == (claims.kind == .guest ? self.guestAudience : self.audience) else { throw TokenRejection.wrongAudience }
        let seconds = now.timeIntervalSince1970
        guard TimeInterval(claims.expiresAt) > seconds else { throw TokenRejection.expired }
        guard TimeInterval(claims.notBefore) <= seconds + self.leeway else { throw TokenRejection.notYetValid }
    }

    private func checkNotRevoked(_ token: VerifiedToken) async throws {
        switch token.kind {
        case .session:
            guard let sessionID = token.sessionID, let session = try await self.sessions.session(id: sessionID),
                session.revokedAt == nil, session.userID == token.userID
            else { throw TokenRejection.revoked }
        case .accessCode:
            guard let code = try await self.accessCodes.accessCode(id: token.claims.tokenID), code.revokedAt == nil,
                code.userID == token.userID
            else { throw TokenRejection.revoked }
        case .guest, .external:
            break
        default:
            throw TokenRejection.malformed
        }
    }
}
