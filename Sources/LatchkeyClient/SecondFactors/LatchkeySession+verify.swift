import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Finishes a sign-in that answered ``LatchkeyError/mfaRequired(_:)`` with a code from the user's authenticator app
    /// (`POST /api/v1/mfa/verify` with the challenge's token and the code) and starts the session the server returns,
    /// as the sign-in would have: it replaces the session in use and is stored. Its access token is at
    /// `aal2`, with both factors in ``AuthSession/amr``.
    ///
    /// ```swift
    /// do {
    ///     try await session.signIn(email: email, password: password)
    /// } catch LatchkeyError.mfaRequired(let challenge) {
    ///     let code = await askForCode()
    ///     try await session.completeSignIn(challenge, code: code)
    /// }
    /// ```
    ///
    /// Runs after the sign-ins started before it; a second call with the same challenge and code while one is running
    /// joins it. The request carries a proof of the device key, as the sign-ins do.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_code` (400) when the code is wrong or was used already: ask
    ///   again with the same challenge. ``LatchkeyError/rejected(_:)`` `invalid_mfa_token` (401) when the challenge is
    ///   unknown, older than five minutes, used, or spent by five wrong codes: sign in again (the session in use, if any,
    ///   is kept; this is not ``LatchkeyError/sessionExpired``). ``LatchkeyError/rateLimited(_:)`` after too many wrong
    ///   codes for the user, with how long to wait. And the errors of ``send(_:)``; no error text contains the code or
    ///   the challenge's token.
    @discardableResult
    public func completeSignIn(_ challenge: MFAChallenge, code: String) async throws -> AuthSession {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.completeSignIn(challenge, MFAVerifyRequest(mfaToken: challenge.mfaToken, code: code), hiding: code)
    }

    /// Finishes a sign-in that answered ``LatchkeyError/mfaRequired(_:)`` with one of the user's recovery codes
    /// (`XXXXX-XXXXX`, in any case, with or without the dash); see ``completeSignIn(_:code:)``. The code is spent: it
    /// never works again, and the server mails the user a notice when they have a verified address.
    ///
    /// - Throws: the errors of ``completeSignIn(_:code:)``; `invalid_code` when the recovery code is wrong or was used.
    @discardableResult
    public func completeSignIn(_ challenge: MFAChallenge, recoveryCode: String) async throws -> AuthSession {
        let code = recoveryCode.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.completeSignIn(challenge, MFAVerifyRequest(mfaToken: challenge.mfaToken, recoveryCode: code), hiding: code)
    }

    /// Proves the signed-in user's second factor again with a code from their authenticator app (a step-up:
    /// `POST /api/v1/mfa/verify` with the session's bearer), so that actions the server keeps for a recent second factor
    /// are allowed: removing a factor, new recovery codes, changing the password, deleting the account. The server
    /// answers those with ``LatchkeyError/rejected(_:)`` `aal2_required` (403) until then, and again once the step-up is
    /// older than its `mfa.step-up-lifetime` (10 minutes by default).
    ///
    /// ```swift
    /// do {
    ///     try await session.deleteAccount()
    /// } catch let error as LatchkeyError where error.code == .aal2Required {
    ///     try await session.stepUp(code: await askForCode())
    ///     try await session.deleteAccount()
    /// }
    /// ```
    ///
    /// The server answers with a new token pair for the same session at `aal2`; it replaces
    /// the session's tokens as a refresh does (stored, ``LatchkeyEvent/tokenRefreshed(_:)``, a new ``AuthState``). When
    /// the session ended or another began while the request was on its way, the answer is dropped and this throws
    /// ``LatchkeyError/notSignedIn``.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_code` (400) when the code is wrong or was used already,
    ///   ``LatchkeyError/rateLimited(_:)`` after too many wrong codes, ``LatchkeyError/notSignedIn`` without a Latchkey
    ///   session (none, or a ``Configuration/tokenProvider``'s), and the errors of ``send(_:)``. No error text contains
    ///   the code.
    @discardableResult
    public func stepUp(code: String) async throws -> AuthSession {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.stepUp(MFAVerifyRequest(code: code), hiding: code)
    }

    /// A step-up (see ``stepUp(code:)``) with one of the user's recovery codes, which is spent.
    @discardableResult
    public func stepUp(recoveryCode: String) async throws -> AuthSession {
        let code = recoveryCode.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.stepUp(MFAVerifyRequest(recoveryCode: code), hiding: code)
    }

    private func completeSignIn(_ challenge: MFAChallenge, _ body: MFAVerifyRequest, hiding code: String) async throws -> AuthSession {
        try await self.serializedSignIn(["mfa-verify", challenge.mfaToken, body.code, body.recoveryCode]) {
            try await self.completeSignInNow(body, hiding: [challenge.mfaToken, code])
        }
    }

    private func completeSignInNow(_ body: MFAVerifyRequest, hiding secrets: [String]) async throws -> AuthSession {
        // No bearer: a 401 here refuses the challenge, never the session in use, which is neither refreshed nor ended.
        var request = try LatchkeyRequest.post("/api/v1/mfa/verify", json: body, auth: .none)
        request.provesDevice = true
        let pair = try await self.send(request, decoding: TokenPairResponse.self, hiding: secrets)
        return try self.begin(self.storedSession(from: pair))
    }

    private func stepUp(_ body: MFAVerifyRequest, hiding code: String) async throws -> AuthSession {
        guard self.configuration.tokenProvider == nil, try self.loadCredentials().session?.kind == .session else {
            throw LatchkeyError.notSignedIn
        }
        var request = try LatchkeyRequest.post("/api/v1/mfa/verify", json: body, auth: .bearer)
        request.provesDevice = true
        let generation = self.generation
        let pair = try await self.send(request, decoding: TokenPairResponse.self, hiding: [code])
        let steppedUp = self.storedSession(from: pair)
        guard generation == self.generation, let current = self.credentials?.session, let refreshToken = current.refreshToken,
            Self.isSameSession(current, as: steppedUp)
        else { throw LatchkeyError.notSignedIn }
        return AuthSession(try self.store(steppedUp, replacing: refreshToken))
    }
}
