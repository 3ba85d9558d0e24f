import Foundation
import LatchkeyAPI
import Logging

/// Sign in with Apple and with Google, account linking, token exchange for third-party providers, and the Apple side
/// of account deletion.
package final class FederationService: Sendable {
    static let appleProvider = "apple"
    static let googleProvider = "google"

    let apple: AppleConfiguration
    let appleVerifier: IdentityTokenVerifier?
    let google: GoogleConfiguration
    let googleVerifier: IdentityTokenVerifier?
    let appleClient: AppleClient
    let external: ExternalTokenVerifier
    let store: any IdentityStore
    let users: any UserStore
    let sessions: SessionService
    let masterKey: MasterKey
    let clock: any WallClock
    let logger: Logger

    init(
        apple: AppleConfiguration, appleVerifier: IdentityTokenVerifier?, google: GoogleConfiguration = GoogleConfiguration(),
        googleVerifier: IdentityTokenVerifier? = nil, appleClient: AppleClient, external: ExternalTokenVerifier, store: any IdentityStore,
        users: any UserStore, sessions: SessionService, masterKey: MasterKey, clock: any WallClock, logger: Logger
    ) {
        self.apple = apple
        self.appleVerifier = appleVerifier
        self.google = google
        self.googleVerifier = googleVerifier
        self.appleClient = appleClient
        self.external = external
        self.store = store
        self.users = users
        self.sessions = sessions
        self.masterKey = masterKey
        self.clock = clock
        self.logger = logger
    }

    /// What a Sign in with Apple did.
    package struct AppleSignIn: Sendable {
        package var tokens: TokenPairResponse
        /// A user was created for this Apple ID.
        package var created: Bool
    }

    /// Verifies the identity token and signs its Apple ID in — or, with `bearer` (a session's token), links
    /// the Apple ID to that session's user.
    ///
    /// Checks, in order: RS256 with a key from Apple's JWKS; `iss`; `exp`; `iat` not ahead beyond
    /// `apple.leeway`; `aud` one of `apple.client-ids`; `nonce` equal (constant time) to SHA-256 hex of
    /// `rawNonce`; the Apple ID not linked to another user (409, before anything is spent). Then the authorization
    /// code, when given and a key is configured, is exchanged for Apple's refresh token, which is stored sealed with
    /// the master key. Last, one transaction spends the nonce (refused when seen before), finds, creates or links the
    /// user and starts the session: a failure anywhere in it leaves no user, no link, no session and the nonce unspent.
    ///
    /// Linking needs a recent sign-in (``SessionService/requireRecentAuthentication(_:proof:)``). The new session is
    /// bound to `proof`'s key when the request carried a DPoP proof.
    package func signInWithApple(
        _ request: AppleSignInRequest, linkingTo bearer: VerifiedToken?, proof: VerifiedProof? = nil
    ) async throws
        -> AppleSignIn
    {
        guard let verifier = self.appleVerifier else {
            throw ServiceError.notFound("Sign in with Apple is not enabled on this server (apple.client-ids is empty).")
        }
        try self.sessions.checkProofPolicy(proof)
        if let bearer { try await self.sessions.requireRecentAuthentication(bearer, proof: proof) }
        let claims = try await verifier.verify(request.identityToken)
        guard let clientID = claims.audiences.first(where: self.apple.clientIDs.contains) else { throw TokenRejection.wrongAudience }
        guard let nonce = claims.string("nonce"), Secret.constantTimeEquals(nonce.lowercased(), Secret.hash(request.rawNonce)) else {
            throw TokenRejection.nonceMismatch
        }
        guard let subject = claims.string("sub"), !subject.isEmpty else { throw TokenRejection.missingSubject }
        if let bearer, let known = try await self.store.identity(provider: Self.appleProvider, subject: subject), known.userID != bearer.userID {
            throw ServiceError.identityAlreadyLinked
        }
        let now = self.clock.now()
        var sealedRefreshToken: String?
        if let code = request.authorizationCode, !code.isEmpty, self.apple.canExchangeCodes {
            sealedRefreshToken = try await self.exchange(code: code, clientID: clientID, subject: subject)
        }
        let identity = FederatedIdentity(
            provider: Self.appleProvider, subject: subject, userID: bearer?.userID ?? "",
            // Apple sends email_verified as "true"/"false" strings (older tokens) or booleans; keep only a verified address.
            email: claims.flag("email_verified") == true ? claims.string("email") : nil,
            clientID: sealedRefreshToken == nil ? nil : clientID, sealedRefreshToken: sealedRefreshToken, createdAt: now)
        let expiresAt = Date(timeIntervalSince1970: claims.seconds("exp") ?? now.timeIntervalSince1970)
        let (tokens, outcome) = try await self.completeSignIn(
            identity, linkingTo: bearer, nonce: SpentNonce(hash: "apple " + nonce.lowercased(), expiresAt: expiresAt), proof: proof)
        if case .created = outcome { return AppleSignIn(tokens: tokens, created: true) }
        return AppleSignIn(tokens: tokens, created: false)
    }

    /// Trades a configured provider's token for a Latchkey session of its user (bound to `proof`'s key when one came):
    /// the user, when new, and the session are written in one transaction.
    package func exchange(_ request: TokenExchangeRequest, proof: VerifiedProof? = nil) async throws -> TokenPairResponse {
        guard let verified = try await self.external.identify(request.subjectToken) else {
            throw TokenRejection.wrongIssuer
        }
        try self.sessions.checkProofPolicy(proof)
        return try await self.completeSignIn(verified.identity(at: self.clock.now()), linkingTo: nil, nonce: nil, proof: proof).tokens
    }

    /// Spends `nonce`, finds, creates or links the user of `identity` and starts its session, in one transaction.
    func completeSignIn(
        _ identity: FederatedIdentity, linkingTo bearer: VerifiedToken?, nonce: SpentNonce?, proof: VerifiedProof?
    )
        async throws -> (tokens: TokenPairResponse, outcome: FederatedSignIn)
    {
        var (session, refreshToken, mfaToken) = self.sessions.makeSession(
            userID: "", deviceID: bearer?.deviceID, proof: proof, amr: [Self.method(of: identity.provider)], secondFactorGate: true)
        let (outcome, start) = try await self.store.completeSignIn(
            identity, linkingTo: bearer?.userID, newUserID: UUID().uuidString.lowercased(), nonce: nonce, session: session,
            now: session.createdAt)
        switch outcome {
        case .existing(let userID), .created(let userID): session.userID = userID
        }
        return (try await self.sessions.answer(start, session: session, refreshToken: refreshToken, mfaToken: mfaToken), outcome)
    }

    /// How a sign-in through `provider` is named in the session's `amr`.
    static func method(of provider: String) -> AuthenticationMethod {
        switch provider {
        case Self.appleProvider: .apple
        case Self.googleProvider: .google
        default: .federated
        }
    }

    /// Unlinks the user's identities at `provider`; returns how many. Refused (409 `last_sign_in_method`) when the
    /// user would have no way left to sign in: a user created by an identity provider keeps at least one identity.
    package func unlink(provider: String, fromUser userID: String) async throws -> Int {
        guard let user = try await self.users.user(id: userID) else { throw ServiceError.notFound("No user with ID \(userID).") }
        let identities = try await self.store.identities(ofUser: userID)
        let unlinking = identities.filter { $0.provider == provider }
        guard !unlinking.isEmpty else { throw ServiceError.notFound("No \(provider) identity is linked to this account.") }
        if user.kind == .federated && unlinking.count == identities.count {
            throw ServiceError.lastSignInMethod(
                "This is the account's only way to sign in: link another identity first, or delete the account instead.")
        }
        // Apple's own tokens for the app are revoked first, as on account deletion; if Apple does not confirm, nothing changes.
        _ = try await self.revokeAppleTokens(ofUser: userID, provider: provider)
        return try await self.store.unlink(provider: provider, fromUser: userID, at: self.clock.now())
    }

    /// Revokes, at Apple, every Apple refresh token stored for the user; returns how many.
    /// Throws ``ServiceError/upstream(_:)`` when Apple does not confirm one: the account must then stay.
    func revokeAppleTokens(ofUser userID: String, provider: String? = nil) async throws -> Int {
        let identities = try await self.store.identitiesWithRefreshTokens(ofUser: userID).filter { provider == nil || $0.provider == provider }
        for identity in identities {
            guard let sealed = identity.sealedRefreshToken, let clientID = identity.clientID else { continue }
            let token = try self.masterKey.open(sealed, context: Self.sealContext(subject: identity.subject))
            do {
                try await self.appleClient.revoke(refreshToken: String(decoding: token, as: UTF8.self), clientID: clientID)
            } catch {
                self.logger.error("revoking an Apple refresh token failed", metadata: ["user_id": "\(userID)", "error": "\(Self.describe(error))"])
                throw ServiceError.upstream("Apple did not confirm revoking the account's Sign in with Apple token; nothing was deleted. Try again.")
            }
        }
        return identities.count
    }

    private func exchange(code: String, clientID: String, subject: String) async throws -> String? {
        let response: AppleClient.TokenResponse
        do {
            response = try await self.appleClient.exchange(code: code, clientID: clientID)
        } catch {
            self.logger.warning("Apple refused an authorization code", metadata: ["error": "\(Self.describe(error))"])
            throw ServiceError.upstream("Apple did not accept the authorization code (\(Self.describe(error))); nothing was changed.")
        }
        if let idToken = response.idToken, let other = IdentityTokenVerifier.unverifiedClaim("sub", of: idToken), other != subject {
            throw ServiceError.upstream("Apple's answer to the authorization code names another Apple ID; nothing was changed.")
        }
        return try response.refreshToken.map { try self.masterKey.seal(Data($0.utf8), context: Self.sealContext(subject: subject)) }
    }

    static func sealContext(subject: String) -> String { "apple refresh token \(subject)" }

    /// What may be said about an outbound failure: upstream errors name Apple's error code, nothing else.
    static func describe(_ error: any Error) -> String {
        if let error = error as? UpstreamError { return error.description }
        return "the request to the identity provider failed"
    }
}

extension FederationService: LinkedGrantRevoker {
    package func revokeGrants(ofUser userID: String) async throws -> Int { try await self.revokeAppleTokens(ofUser: userID) }
}
