import Foundation
import LatchkeyAPI

extension FederationService {
    /// Verifies a Google ID token and signs its Google account in — or, with `bearer` (a session's token), links the
    /// account to that session's user. Answers like ``signInWithApple(_:linkingTo:proof:)``.
    ///
    /// Checks, with no network call once Google's keys are cached: RS256 with a key from Google's JWKS; `iss` one of
    /// Google's two; `exp` and `iat`/`nbf` within `google.leeway`; `aud` one of `google.client-ids`; `azp`, when
    /// present, one of them too; the nonce; `hd` when `google.hosted-domains` is set; a subject. Google puts the app's
    /// nonce in the token as it was given, not hashed: with `request.nonce` the token's must equal it byte for byte, and
    /// a token that carries a nonce the request did not send is refused. The email address is kept only when
    /// `email_verified` is true, and never used to find a user: the Google subject alone names the account.
    package func signInWithGoogle(
        _ request: GoogleSignInRequest, linkingTo bearer: VerifiedToken?, proof: VerifiedProof? = nil
    ) async throws -> AppleSignIn {
        guard let verifier = self.googleVerifier else {
            throw ServiceError.notFound("Sign in with Google is not enabled on this server (google.client-ids is empty).")
        }
        try self.sessions.checkProofPolicy(proof)
        if let bearer { try await self.sessions.requireRecentAuthentication(bearer, proof: proof) }
        let claims = try await verifier.verify(request.idToken)
        guard claims.audiences.contains(where: self.google.clientIDs.contains) else { throw TokenRejection.wrongAudience }
        if claims.values["azp"] != nil {
            guard let party = claims.string("azp"), self.google.clientIDs.contains(party) else { throw TokenRejection.unauthorizedParty }
        }
        try Self.checkNonce(claims.values["nonce"], sent: request.nonce)
        guard self.google.accepts(hostedDomain: claims.string("hd")) else { throw TokenRejection.wrongHostedDomain }
        guard let subject = claims.string("sub"), !subject.isEmpty else { throw TokenRejection.missingSubject }
        if let bearer, let known = try await self.store.identity(provider: Self.googleProvider, subject: subject), known.userID != bearer.userID {
            throw ServiceError.identityAlreadyLinked
        }
        let identity = FederatedIdentity(
            provider: Self.googleProvider, subject: subject, userID: bearer?.userID ?? "",
            email: claims.flag("email_verified") == true ? claims.string("email") : nil, clientID: nil, sealedRefreshToken: nil,
            createdAt: self.clock.now())
        let (tokens, outcome) = try await self.completeSignIn(identity, linkingTo: bearer, nonce: nil, proof: proof)
        if case .created = outcome { return AppleSignIn(tokens: tokens, created: true) }
        return AppleSignIn(tokens: tokens, created: false)
    }

    /// The token's `nonce` claim against the request's `nonce`, compared raw (constant time): equal when one was sent,
    /// absent when none was.
    static func checkNonce(_ claim: ClaimValue?, sent: String?) throws {
        guard let sent else {
            guard claim == nil else { throw TokenRejection.nonceMismatch }
            return
        }
        guard case .string(let nonce) = claim, Secret.constantTimeEquals(nonce, sent) else { throw TokenRejection.nonceMismatch }
    }
}
