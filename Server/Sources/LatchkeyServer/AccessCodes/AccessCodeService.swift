import Foundation
import LatchkeyAPI

/// Access codes: JWTs for an existing user, issued by support staff, usable as a Bearer or
/// exchangeable for a session, listed and revocable.
package struct AccessCodeService: Sendable {
    let store: any AccessCodeStore
    let users: any UserStore
    let tokens: AccessTokenIssuer
    let verifier: AccessTokenVerifier
    let sessions: SessionService
    let defaultLifetime: TimeInterval
    /// Records each exchange: support's own door, never gated by a second factor, so always on the record.
    let audit: AuditLog
    let clock: any WallClock

    /// Issues a code for the existing user `userID`; returns the code (a JWT) and its record.
    package func issue(userID: String, expiresIn: TimeInterval?, note: String?) async throws -> (code: String, record: AccessCodeRecord) {
        guard try await self.users.user(id: userID) != nil else {
            throw ServiceError.notFound("No user with ID \(userID): register the device first (POST /api/v1/users/register).")
        }
        let lifetime = expiresIn ?? self.defaultLifetime
        let (code, claims) = try await self.tokens.issue(
            kind: .accessCode, subject: userID, sessionID: nil, deviceID: nil, lifetime: lifetime)
        let record = AccessCodeRecord(
            id: claims.tokenID, userID: userID, note: note, createdAt: Date(timeIntervalSince1970: TimeInterval(claims.issuedAt)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.expiresAt)), revokedAt: nil)
        try await self.store.insertAccessCode(record)
        return (code, record)
    }

    package func list() async throws -> [AccessCodeRecord] { try await self.store.accessCodes() }

    /// The codes issued for `userID`, newest first.
    package func list(ofUser userID: String) async throws -> [AccessCodeRecord] { try await self.store.accessCodes(ofUser: userID) }

    /// Revokes the code with ID (`jti`) `id` and ends the sessions exchanged from it; they get 401 at once on this
    /// server, and on the others through the revocation feed.
    package func revoke(id: String) async throws -> (code: AccessCodeRecord, revokedSessions: Int) {
        guard let (record, sessions) = try await self.store.revokeAccessCode(id: id, at: self.clock.now()) else {
            throw ServiceError.notFound("No access code with ID \(id).")
        }
        return (record, sessions.count)
    }

    /// Trades a valid access code for a new session of its user (bound to `proof`'s key when one came). The code stays
    /// valid; revoking it ends the session.
    package func exchange(code: String, proof: VerifiedProof? = nil) async throws -> TokenPairResponse {
        let verified = try await self.verifier.verify(code)
        guard verified.kind == .accessCode else { throw TokenRejection.notAnAccessCode }
        let tokens = try await self.sessions.startSession(
            userID: verified.userID, deviceID: nil, proof: proof, accessCodeID: verified.claims.tokenID, amr: [.accessCode])
        try await self.audit.record(
            AuditActor(name: "access_code:\(verified.claims.tokenID)", source: "api"), AuditAction.accessCodeExchange,
            target: "user \(verified.userID)", details: "session \(tokens.sessionID)")
        return tokens
    }
}
