import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Signs in with Apple (`POST /api/v1/auth/apple`), or links Apple to this device's anonymous user, and starts the
    /// session the server returns.
    ///
    /// Make an ``AppleNonce`` for the attempt, put its ``AppleNonce/sha256`` in `ASAuthorizationAppleIDRequest.nonce`,
    /// and pass its ``AppleNonce/raw`` here with the credential's identity token (and authorization code, which lets the
    /// server revoke the Apple tokens when the account is deleted).
    ///
    /// With `linkingCurrentUser` (the default) and a session of this device's user in use (from ``registerDevice()``,
    /// its user ID is the device UUID), the request carries that session's bearer (refreshed first when it is about to
    /// expire): the server links the Apple ID to that user, which keeps its ID and data. If that session's refresh is
    /// rejected, it is over, and the call signs in without linking. Any other session (a guest, an access code, a user
    /// who signed in with Apple before) is not sent: the Apple ID's own user signs in, created on first use.
    ///
    /// The new session replaces the one in use (a refresh of the old one still in flight cannot overwrite it); the
    /// device UUID and device secret stay. Sign-ins run one at a time: this one starts after those started before it, and
    /// a second call with the same credential while it runs joins it (one request, one session). On failure the session
    /// in use is kept as it was:
    /// - ``LatchkeyError/rejected(_:)`` `identity_already_linked`: the Apple ID belongs to another user (409); nothing was merged.
    /// - ``LatchkeyError/rejected(_:)`` `sign_in_rejected`: the identity token or nonce was refused (401), e.g. expired
    ///   or already used; start over with a new nonce. This is not ``LatchkeyError/sessionExpired``.
    /// - ``LatchkeyError/server(_:)`` with code `upstream_error` (502): Apple refused the
    ///   authorization code.
    ///
    /// Not for sessions configured with a ``Configuration/tokenProvider``: those take every bearer from the provider.
    ///
    /// - Parameters:
    ///   - identityToken: `ASAuthorizationAppleIDCredential.identityToken` as UTF-8 text.
    ///   - rawNonce: the ``AppleNonce/raw`` nonce whose hash was in the Apple request.
    ///   - authorizationCode: `ASAuthorizationAppleIDCredential.authorizationCode` as UTF-8 text, if any.
    ///   - linkingCurrentUser: whether to link Apple to this device's user when its session is in use.
    /// - Returns: the new session (for a linked user, the same user ID as before).
    @discardableResult
    public func signInWithApple(
        identityToken: String, rawNonce: String, authorizationCode: String? = nil, linkingCurrentUser: Bool = true
    ) async throws -> AuthSession {
        try await self.serializedSignIn(["apple", identityToken, rawNonce, authorizationCode, String(linkingCurrentUser)]) {
            try await self.signInWithAppleNow(
                identityToken: identityToken, rawNonce: rawNonce, authorizationCode: authorizationCode, linkingCurrentUser: linkingCurrentUser)
        }
    }

    private func signInWithAppleNow(
        identityToken: String, rawNonce: String, authorizationCode: String?, linkingCurrentUser: Bool
    ) async throws -> AuthSession {
        let body = AppleSignInRequest(identityToken: identityToken, rawNonce: rawNonce, authorizationCode: authorizationCode)
        return try await self.nativeSignIn(
            "/api/v1/auth/apple", body: body, linkingCurrentUser: linkingCurrentUser, hiding: [identityToken, rawNonce, authorizationCode])
    }

    /// Signs in with Google (`POST /api/v1/auth/google`), or links Google to this device's anonymous user, and starts the
    /// session the server returns.
    ///
    /// Get the ID token from GoogleSignIn-iOS after the person signs in (`GIDSignInResult.user.idToken?.tokenString`).
    /// When the app passed a nonce to `GIDSignIn.signIn(withPresenting:hint:additionalScopes:nonce:)`, pass the same nonce
    /// here, **as it was given, not hashed**: Google puts it in the ID token unchanged and the server compares the two
    /// byte for byte (unlike Sign in with Apple, whose token carries the nonce's SHA-256). A token with a nonce must come
    /// with that nonce, and a token without one with none.
    ///
    /// ```swift
    /// let nonce = UUID().uuidString
    /// let result = try await GIDSignIn.sharedInstance.signIn(
    ///     withPresenting: viewController, hint: nil, additionalScopes: nil, nonce: nonce)
    /// guard let idToken = result.user.idToken?.tokenString else { return }
    /// try await session.signInWithGoogle(idToken: idToken, nonce: nonce)
    /// ```
    ///
    /// Linking, replacing the session in use, and running one sign-in at a time work as in
    /// ``signInWithApple(identityToken:rawNonce:authorizationCode:linkingCurrentUser:)-(String,_,_,_)``: with
    /// `linkingCurrentUser` (the default) and a session of this device's user in use, the server links the Google account
    /// to that user, which keeps its ID and data. The server keeps the account's email address only when Google verified
    /// it, and never uses it to find or merge accounts. On failure the session in use is kept as it was:
    /// - ``LatchkeyError/rejected(_:)`` `identity_already_linked`: the Google account belongs to another user (409); nothing was merged.
    /// - ``LatchkeyError/rejected(_:)`` `sign_in_rejected`: the ID token or nonce was refused (401), e.g. expired, for
    ///   another app's client ID, or another domain than the server's `google.hosted-domains`.
    /// - ``LatchkeyError/rejected(_:)`` `not_found` (404): the server has no `google.client-ids`.
    ///
    /// Not for sessions configured with a ``Configuration/tokenProvider``: those take every bearer from the provider.
    ///
    /// - Parameters:
    ///   - idToken: the Google ID token (a JWT) GoogleSignIn-iOS returned.
    ///   - nonce: the nonce given to Google for this sign-in, raw; `nil` when none was given.
    ///   - linkingCurrentUser: whether to link Google to this device's user when its session is in use.
    /// - Returns: the new session (for a linked user, the same user ID as before).
    @discardableResult
    public func signInWithGoogle(idToken: String, nonce: String? = nil, linkingCurrentUser: Bool = true) async throws -> AuthSession {
        try await self.serializedSignIn(["google", idToken, nonce, String(linkingCurrentUser)]) {
            try await self.nativeSignIn(
                "/api/v1/auth/google", body: GoogleSignInRequest(idToken: idToken, nonce: nonce), linkingCurrentUser: linkingCurrentUser,
                hiding: [idToken, nonce])
        }
    }

    /// Posts a native sign-in's `body` to `path` — with the bearer of this device's user's session when linking — and
    /// starts the session it answers; no error text keeps any of `secrets`.
    private func nativeSignIn(
        _ path: String, body: some Encodable, linkingCurrentUser: Bool, hiding secrets: [String?]
    ) async throws -> AuthSession {
        var headers = ["Content-Type": "application/json"]
        let bearer = linkingCurrentUser ? try await self.linkingBearer() : nil
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        var request = LatchkeyRequest(method: "POST", path: path, headers: headers, body: try JSONEncoder().encode(body), auth: .none)
        request.provesDevice = true
        let pair = try await self.signInPair(request, hiding: secrets + [bearer])
        return try self.begin(self.storedSession(from: pair))
    }

    /// ``signInWithApple(identityToken:rawNonce:authorizationCode:linkingCurrentUser:)-(String,_,_,_)`` with the `Data` an
    /// `ASAuthorizationAppleIDCredential` holds, decoded as UTF-8.
    ///
    /// ```swift
    /// guard let credential = authorization.credential as? ASAuthorizationAppleIDCredential,
    ///       let identityToken = credential.identityToken else { return }
    /// try await session.signInWithApple(identityToken: identityToken, rawNonce: nonce.raw,
    ///                                   authorizationCode: credential.authorizationCode)
    /// ```
    ///
    /// Throws ``LatchkeyError/rejected(_:)`` `sign_in_rejected` without sending anything when either is not UTF-8.
    @discardableResult
    public func signInWithApple(
        identityToken: Data, rawNonce: String, authorizationCode: Data? = nil, linkingCurrentUser: Bool = true
    ) async throws -> AuthSession {
        guard let token = String(data: identityToken, encoding: .utf8) else {
            throw LatchkeyError.rejected(.signInRejected, message: "The identity token from Apple is not UTF-8 text.")
        }
        var code: String?
        if let authorizationCode {
            guard let text = String(data: authorizationCode, encoding: .utf8) else {
                throw LatchkeyError.rejected(.signInRejected, message: "The authorization code from Apple is not UTF-8 text.")
            }
            code = text
        }
        return try await self.signInWithApple(
            identityToken: token, rawNonce: rawNonce, authorizationCode: code, linkingCurrentUser: linkingCurrentUser)
    }

    /// Trades another identity provider's token (e.g. a Clerk session token) for a Latchkey session
    /// (`POST /api/v1/auth/token-exchange`) and starts it, for apps moving from the provider's tokens to Latchkey sessions.
    ///
    /// The server must have the provider configured. The new session has a refresh token and replaces the one in use;
    /// the device UUID and device secret stay. A refused token is ``LatchkeyError/rejected(_:)`` `sign_in_rejected` and
    /// keeps the session in use. To send the provider's tokens as bearers instead, set ``Configuration/tokenProvider``
    /// (not both: with a token provider, stored sessions are not used).
    ///
    /// Runs after the sign-ins started before it; a second call with the same token while one is running joins it.
    @discardableResult
    public func exchangeExternalToken(_ token: String) async throws -> AuthSession {
        try await self.serializedSignIn(["token-exchange", token]) { try await self.exchangeExternalTokenNow(token) }
    }

    private func exchangeExternalTokenNow(_ token: String) async throws -> AuthSession {
        var request = try LatchkeyRequest.post("/api/v1/auth/token-exchange", json: TokenExchangeRequest(subjectToken: token), auth: .none)
        request.provesDevice = true
        let pair = try await self.signInPair(request, hiding: [token])
        return try self.begin(self.storedSession(from: pair))
    }

    /// Deletes the signed-in user's account (`DELETE /api/v1/users/me`), then signs out locally.
    ///
    /// The server removes the user, its sessions and devices, and revokes its Apple tokens; it needs a recent sign-in,
    /// which the request's proof of the device key gives when the session was started with it (otherwise
    /// ``LatchkeyError/rejected(_:)`` `reauthentication_required`). Here the session is cleared (state ``AuthState/signedOut(reason:)``). When the
    /// deleted user was this device's own, its ID is retired on the server, so this install starts a new device
    /// identity (``LatchkeyEvent/deviceIdentityReplaced(_:)``): a later ``registerDevice()`` creates a new, empty user.
    /// When the call fails nothing changes here.
    ///
    /// Only the session that was deleted ends: when another session replaced it while the call was on its way (a sign-in
    /// here, or another process's that this one adopted), that one stays in use, and so does this install's device
    /// identity (a later ``registerDevice()`` of a retired device UUID starts a new one by itself).
    @discardableResult
    public func deleteAccount() async throws -> AccountDeletionResponse {
        var request = LatchkeyRequest(method: "DELETE", path: "/api/v1/users/me", auth: .bearer)
        request.provesDevice = true
        let generation = self.generation
        let deleted = try await self.send(request, decoding: AccountDeletionResponse.self)
        guard generation == self.generation else { return deleted }
        if let credentials = self.credentials, deleted.userID.caseInsensitiveCompare(credentials.deviceID.uuidString) == .orderedSame {
            try? self.replaceDeviceIdentity(.accountDeleted, signOutReason: .requested)
        }
        self.endSession(.signedOut(reason: .requested), reason: .requested)
        return deleted
    }

    /// The bearer that asks the server to link: the access token of this device's user's session, refreshed when it is
    /// about to expire; `nil` when there is no such session (or its refresh was rejected, which ended it).
    private func linkingBearer() async throws -> String? {
        guard self.configuration.tokenProvider == nil else { return nil }
        let credentials = try self.loadCredentials()
        guard let session = credentials.session, session.kind == .session,
            session.userID.caseInsensitiveCompare(credentials.deviceID.uuidString) == .orderedSame
        else { return nil }
        guard self.isExpiring(session) else { return session.accessToken }
        guard session.refreshToken != nil else { return nil }
        do {
            return try await self.refreshSession(replacing: session.accessToken).accessToken
        } catch LatchkeyError.sessionExpired, LatchkeyError.notSignedIn {
            return nil
        }
    }

    /// Sends a sign-in request and decodes its token pair; a 401 is ``LatchkeyError/rejected(_:)`` `sign_in_rejected`
    /// (never a sign-out), and no error text keeps any of `secrets`.
    private func signInPair(_ request: LatchkeyRequest, hiding secrets: [String?]) async throws -> TokenPairResponse {
        do {
            return try await self.send(request, decoding: TokenPairResponse.self)
        } catch let error as LatchkeyError where error.details?.status == 401 {
            throw LatchkeyError.rejected(.signInRejected, status: 401, message: error.details?.message).redacting(secrets)
        } catch let error as LatchkeyError {
            throw error.redacting(secrets)
        }
    }
}
