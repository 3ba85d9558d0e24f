import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/apple`, `POST /api/v1/auth/token-exchange` and `DELETE /api/v1/users/me`.
@available(LatchkeyServer 1.0, *)
struct FederationRoutes {
    let federation: FederationService
    let users: UserService
    let verifier: AccessTokenVerifier
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(public router: RouterGroup<LatchkeyRequestContext>, authenticated: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/apple") { request, context in
            try await self.limiter.limiting(self.limits.signIn, key: context.clientIP(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                // An optional Bearer: a session to link the Apple ID to. A Bearer that does not verify is an error,
                // not a silent sign-in as someone else.
                var bearer: VerifiedToken?
                if let token = request.bearerToken { bearer = try await self.verifier.verify(token) }
                let body = try await request.decodeJSON(as: AppleSignInRequest.self, limit: self.maxBodySize)
                guard !body.identityToken.isEmpty, !body.rawNonce.isEmpty else {
                    throw APIError.badRequest("Send identity_token and raw_nonce.")
                }
                let signIn = try await self.federation.signInWithApple(body, linkingTo: bearer)
                return try jsonResponse(signIn.tokens, status: signIn.created ? .created : .ok)
            }
        }
        router.post("auth/token-exchange") { request, context in
            try await self.limiter.limiting(self.limits.signIn, key: context.clientIP(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                let body = try await request.decodeJSON(as: TokenExchangeRequest.self, limit: self.maxBodySize)
                guard !body.subjectToken.isEmpty else { throw APIError.badRequest("Send subject_token: a token of a configured identity provider.") }
                return try jsonResponse(try await self.federation.exchange(body))
            }
        }
        authenticated.delete("users/me") { _, context in
            let token = try context.requireIdentity()
            guard token.kind == .session || token.kind == .external else {
                throw ServiceError.forbidden("Only the account's own session (or identity provider token) can delete it.")
            }
            let (deleted, apple) = try await self.users.delete(userID: token.userID)
            return try jsonResponse(
                AccountDeletionResponse(userID: deleted.userID, revokedSessions: deleted.sessionIDs.count, appleTokensRevoked: apple))
        }
    }
}
