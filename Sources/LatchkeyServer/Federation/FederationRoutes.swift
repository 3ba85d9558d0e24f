import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/apple`, `POST /api/v1/auth/token-exchange`, `DELETE /api/v1/users/me` and
/// `DELETE /api/v1/users/me/identities/{provider}`.
@available(LatchkeyServer 1.0, *)
struct FederationRoutes {
    let federation: FederationService
    let users: UserService
    let sessions: SessionService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(public router: RouterGroup<LatchkeyRequestContext>, authenticated: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/apple") { request, context in
            let proof = try self.dpop.proof(of: request)
            return try await self.limiter.limiting(self.limits.signIn, key: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                // An optional Bearer: a session to link the Apple ID to. A Bearer that does not verify is an error,
                // not a silent sign-in as someone else.
                var bearer: VerifiedToken?
                if let token = request.bearerToken { bearer = try await self.verifier.verify(token) }
                let body = try await request.decodeJSON(as: AppleSignInRequest.self, limit: self.maxBodySize)
                guard !body.identityToken.isEmpty, !body.rawNonce.isEmpty else {
                    throw APIError.badRequest("Send identity_token and raw_nonce.")
                }
                let signIn = try await self.federation.signInWithApple(body, linkingTo: bearer, proof: proof)
                return try tokenResponse(signIn.tokens, status: signIn.created ? .created : .ok)
            }
        }
        router.post("auth/token-exchange") { request, context in
            let proof = try self.dpop.proof(of: request)
            return try await self.limiter.limiting(self.limits.signIn, key: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                let body = try await request.decodeJSON(as: TokenExchangeRequest.self, limit: self.maxBodySize)
                guard !body.subjectToken.isEmpty else { throw APIError.badRequest("Send subject_token: a token of a configured identity provider.") }
                return try tokenResponse(try await self.federation.exchange(body, proof: proof))
            }
        }
        authenticated.delete("users/me") { request, context in
            let token = try context.requireIdentity()
            guard token.kind == .session || token.kind == .external else {
                throw ServiceError.forbidden("Only the account's own session (or identity provider token) can delete it.")
            }
            try await self.sessions.requireRecentAuthentication(token, proof: try self.dpop.proof(of: request))
            let (deleted, apple) = try await self.users.delete(userID: token.userID)
            return try jsonResponse(
                AccountDeletionResponse(userID: deleted.userID, revokedSessions: deleted.sessionIDs.count, appleTokensRevoked: apple))
        }
        authenticated.delete("users/me/identities/:provider") { request, context in
            let token = try context.requireIdentity()
            let provider = try context.parameters.require("provider")
            try await self.sessions.requireRecentAuthentication(token, proof: try self.dpop.proof(of: request))
            guard let user = try await self.users.user(id: token.userID) else { throw TokenRejection.revoked }
            let unlinked = try await self.federation.unlink(provider: provider, fromUser: user.id, kind: user.kind)
            return try jsonResponse(UnlinkIdentityResponse(provider: provider, unlinked: unlinked))
        }
    }
}
