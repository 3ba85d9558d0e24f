import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/apple`, `POST /api/v1/auth/google`, `POST /api/v1/auth/token-exchange` and
/// `DELETE /api/v1/users/me/identities/{provider}`.
struct FederationRoutes {
    let federation: FederationService
    let sessions: SessionService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits
    /// Tells the user's verified address when a way to sign in is linked or unlinked (nil without email accounts).
    var accounts: EmailAccountService? = nil

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        let signIn = RouteRequirement<LatchkeyRequestContext>.limited(
            by: self.limits.signIn, limiter: self.limiter, trustedProxies: self.limits.trustedProxies,
            counting: "attempts (Apple, Google and token exchange together)")
        api.add(
            Self.apple,
            requirements: [
                .proof(self.dpop), signIn, .issuesSessionTokens,
                // An optional Bearer: a session to link the Apple ID to. One that does not verify is an error, not a silent
                // sign-in as someone else.
                .token(
                    self.verifier, kinds: [.session], optional: true,
                    refusal: "Only a signed-in session can link an Apple ID; guest tokens and access codes cannot."),
            ]
        ) { request, context in
            let body = try await request.decode(as: AppleSignInRequest.self, context: context)
            guard !body.identityToken.isEmpty, !body.rawNonce.isEmpty else { throw APIError.badRequest("Send identity_token and raw_nonce.") }
            let signedIn = try await self.federation.signInWithApple(body, linkingTo: context.identity, proof: context.proof)
            if let bearer = context.identity {
                await self.accounts?.tellSignInChanged(userID: bearer.userID, "Sign in with Apple was linked to your account: it now signs in too.")
            }
            return Answer.tokens(signedIn.tokens, status: signedIn.created ? .created : .ok)
        }
        api.add(
            Self.google,
            requirements: [
                .proof(self.dpop), signIn, .issuesSessionTokens,
                .token(
                    self.verifier, kinds: [.session], optional: true,
                    refusal: "Only a signed-in session can link a Google account; guest tokens and access codes cannot."),
            ]
        ) { request, context in
            let body = try await request.decode(as: GoogleSignInRequest.self, context: context)
            guard !body.idToken.isEmpty, body.nonce?.isEmpty != true else {
                throw APIError.badRequest("Send id_token (and nonce, when the app gave Google one, as it was given).")
            }
            let signedIn = try await self.federation.signInWithGoogle(body, linkingTo: context.identity, proof: context.proof)
            if let bearer = context.identity {
                await self.accounts?.tellSignInChanged(userID: bearer.userID, "Sign in with Google was linked to your account: it now signs in too.")
            }
            return Answer.tokens(signedIn.tokens, status: signedIn.created ? .created : .ok)
        }
        api.add(Self.tokenExchange, requirements: [.proof(self.dpop), signIn, .issuesSessionTokens]) { request, context in
            let body = try await request.decode(as: TokenExchangeRequest.self, context: context)
            guard !body.subjectToken.isEmpty else { throw APIError.badRequest("Send subject_token: a token of a configured identity provider.") }
            return Answer.tokens(try await self.federation.exchange(body, proof: context.proof))
        }
        api.add(
            Self.unlink,
            requirements: [
                .proof(self.dpop),
                .token(self.verifier, kinds: [.session, .external], refusal: "Only the account's own session can unlink its identities."),
            ]
        ) { _, context in
            let token = try context.requireIdentity()
            let provider = try context.parameters.require("provider")
            try await self.sessions.requireRecentAuthentication(token, proof: context.proof)
            try await self.sessions.requireStepUp(token)
            let unlinked = try await self.federation.unlink(provider: provider, fromUser: token.userID)
            if unlinked > 0 {
                await self.accounts?.tellSignInChanged(userID: token.userID, "Your \(provider) sign-in was unlinked from your account.")
            }
            return Answer(UnlinkIdentityResponse(provider: provider, unlinked: unlinked))
        }
    }
}
