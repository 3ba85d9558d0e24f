/// What ``AccessTokenVerifier`` asks to refuse a revoked token: the session a token names (the sessions store).
package protocol SessionLookup: Sendable {
    func session(id: String) async throws -> SessionRecord?
}

/// What ``AccessTokenVerifier`` asks to refuse a revoked access code (the access-codes store).
package protocol AccessCodeLookup: Sendable {
    func accessCode(id: String) async throws -> AccessCodeRecord?
}

/// Verifies tokens of other issuers (identity providers such as Clerk) as Latchkey users' tokens.
package protocol ExternalTokenVerifying: Sendable {
    /// The token as one of a Latchkey user's, or nil when its issuer is none this server accepts; throws
    /// ``TokenRejection`` for a token that fails a check.
    func verify(_ token: String) async throws -> VerifiedToken?
}
