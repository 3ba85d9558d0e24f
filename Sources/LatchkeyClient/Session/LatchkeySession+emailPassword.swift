import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Gives an account an email address and a password (`POST /api/v1/auth/register`); the server mails a 6-digit code
    /// and a link to verify the address.
    ///
    /// With `attachToCurrentUser` (the default) and a session in use (from ``registerDevice()``, Sign in with Apple or
    /// ``signIn(email:password:)``), the request carries that session's bearer (refreshed when it is about to expire or
    /// is refused) and the address and password are added to that user: its user ID and data stay, and the session goes
    /// on. If that session's refresh is rejected, the session is over and this throws ``LatchkeyError/sessionExpired``
    /// without registering anything. Without such a session (none, a guest, an access code, or a
    /// ``Configuration/tokenProvider``), or with `attachToCurrentUser` false, the server creates a new user and starts no
    /// session: verify the address, then ``signIn(email:password:)``.
    ///
    /// The address is remembered in memory, so ``verifyEmail(code:)`` needs only the code from the mail.
    ///
    /// Adding a way to sign in to a user needs a recent sign-in: the request carries a proof of the device key, which
    /// gives it when the session was started with that key; otherwise the session must be at most
    /// `tokens.recent-authentication` old. An address another account verified is answered like any other (the server
    /// mails its owner instead) unless the server sets `email.reveal-existing`.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `weak_password`, ``LatchkeyError/rejected(_:)`` `invalid_email`, ``LatchkeyError/rejected(_:)`` `email_taken`
    ///   (only from a server with `email.reveal-existing`), ``LatchkeyError/rejected(_:)`` `email_already_set` (the session's user has an
    ///   address already), ``LatchkeyError/rejected(_:)`` `reauthentication_required` (no recent sign-in: sign in again, then retry),
    ///   ``LatchkeyError/rejected(_:)`` `email_not_configured` (the server sends no mail), and the errors of ``send(_:)``. No error text
    ///   contains the password.
    /// - Returns: the address as the server stores it, not yet verified, and its user's ID.
    @discardableResult
    public func register(email: String, password: String, attachToCurrentUser: Bool = true) async throws -> EmailAccountResponse {
        let attaching = try attachToCurrentUser && self.hasSessionToAttachTo()
        let body = EmailRegistrationRequest(email: email, password: password)
        var request = try LatchkeyRequest.post("/api/v1/auth/register", json: body, auth: attaching ? .bearer : .none)
        request.provesDevice = attaching
        let account = try await self.sendEmailRequest(request, decoding: EmailAccountResponse.self, hiding: [password])
        self.emailAwaitingVerification = account.email
        return account
    }

    /// Signs in with an email address and its password (`POST /api/v1/auth/login`) and starts the session the server
    /// returns, as the other sign-ins do: it replaces the session in use and is stored, so the next launch's
    /// ``bootstrap()`` is signed in.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_credentials` (the same for an unknown address), ``LatchkeyError/rejected(_:)`` `email_not_verified`
    ///   (the password is right; the address is then remembered for ``verifyEmail(code:)``),
    ///   ``LatchkeyError/rejected(_:)`` `too_many_attempts` after too many failed tries for this account,
    ///   ``LatchkeyError/rejected(_:)`` `email_not_configured`, and the errors of ``send(_:)``. On failure the session in use is kept.
    ///
    /// Runs after the sign-ins started before it; a second call with the same address and password while one is running
    /// (a double-tapped button) joins it: one request, one session.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> AuthSession {
        try await self.serializedSignIn(["password", email, password]) { try await self.signInNow(email: email, password: password) }
    }

    private func signInNow(email: String, password: String) async throws -> AuthSession {
        var request = try LatchkeyRequest.post("/api/v1/auth/login", json: PasswordLoginRequest(email: email, password: password), auth: .none)
        request.provesDevice = true
        let pair: TokenPairResponse
        do {
            pair = try await self.sendEmailRequest(request, decoding: TokenPairResponse.self, hiding: [password])
        } catch let error as LatchkeyError where error.has(.emailNotVerified) {
            self.emailAwaitingVerification = email
            throw error
        }
        return try self.begin(self.storedSession(from: pair))
    }

    /// Verifies the address ``register(email:password:attachToCurrentUser:)`` registered (or a sign-in found not yet
    /// verified) with the 6-digit code from the mail (`POST /api/v1/auth/verify-email`).
    ///
    /// - Throws: ``LatchkeyError/invalidRequest(_:)`` without sending anything when no address is remembered here (after a
    ///   relaunch, say): use ``verifyEmail(email:code:)``. Otherwise the errors of ``verifyEmail(email:code:)``.
    @discardableResult
    public func verifyEmail(code: String) async throws -> EmailAccountResponse {
        guard let email = self.emailAwaitingVerification else {
            throw LatchkeyError.invalidRequest("no email address is waiting for a code here; pass it with verifyEmail(email:code:)")
        }
        return try await self.verifyEmail(email: email, code: code)
    }

    /// Verifies `email` with the 6-digit code from the mail (`POST /api/v1/auth/verify-email`).
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_code` when the code is wrong, expired or already used (ask for a new mail with
    ///   ``resendVerification(email:)``), ``LatchkeyError/rejected(_:)`` `email_not_configured`, and the errors of ``send(_:)``.
    @discardableResult
    public func verifyEmail(email: String, code: String) async throws -> EmailAccountResponse {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.verifyEmail(VerifyEmailRequest(email: email, code: code), hiding: code)
    }

    /// Verifies an address with the token of the mail's link (`POST /api/v1/auth/verify-email`), for an app that opens
    /// the link itself.
    ///
    /// - Throws: the errors of ``verifyEmail(email:code:)``.
    @discardableResult
    public func verifyEmail(token: String) async throws -> EmailAccountResponse {
        try await self.verifyEmail(VerifyEmailRequest(token: token), hiding: token)
    }

    /// Asks the server to mail a new verification code and link to `email` (`POST /api/v1/auth/resend-verification`).
    /// The answer is the same whether or not the address has an account, and whether or not the server's limit on mails
    /// to one address (by default one a minute) let a mail go; the address is remembered for ``verifyEmail(code:)``.
    @discardableResult
    public func resendVerification(email: String) async throws -> MailAcceptedResponse {
        let request = try LatchkeyRequest.post("/api/v1/auth/resend-verification", json: EmailAddressRequest(email: email), auth: .none)
        let accepted = try await self.sendEmailRequest(request, decoding: MailAcceptedResponse.self, hiding: [])
        self.emailAwaitingVerification = email
        return accepted
    }

    /// Asks the server to mail a password-reset code and link to `email` (`POST /api/v1/auth/reset-password`). The
    /// answer is the same whether or not the address has an account, and whether or not the server's limit on mails to
    /// one address (by default one a minute) let a mail go. Then call ``resetPassword(token:newPassword:)`` or
    /// ``resetPassword(email:code:newPassword:)``.
    @discardableResult
    public func requestPasswordReset(email: String) async throws -> MailAcceptedResponse {
        let request = try LatchkeyRequest.post("/api/v1/auth/reset-password", json: EmailAddressRequest(email: email), auth: .none)
        return try await self.sendEmailRequest(request, decoding: MailAcceptedResponse.self, hiding: [])
    }

    /// Sets a new password with the token of the reset mail's link (`POST /api/v1/auth/reset-password/confirm`).
    ///
    /// The server revokes every session of the user and every device credential of it (`PasswordChangedResponse.revokedDevices`
    /// counts them) but this device's, whose key the request proves. When the session in use here is that user's, it is
    /// signed out here too (``SignOutReason/revoked``, state `.signedOut(reason: .revoked)`): sign in with the new password.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_code` (the link is wrong, expired or used), ``LatchkeyError/rejected(_:)`` `weak_password`,
    ///   ``LatchkeyError/rejected(_:)`` `email_not_configured`, and the errors of ``send(_:)``. No error text contains the token or password.
    @discardableResult
    public func resetPassword(token: String, newPassword: String) async throws -> PasswordChangedResponse {
        try await self.confirmPasswordReset(ResetPasswordConfirmRequest(token: token, newPassword: newPassword), hiding: [token, newPassword])
    }

    /// Sets a new password with the address and the 6-digit code of the reset mail (`POST
    /// /api/v1/auth/reset-password/confirm`); see ``resetPassword(token:newPassword:)``.
    @discardableResult
    public func resetPassword(email: String, code: String, newPassword: String) async throws -> PasswordChangedResponse {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = ResetPasswordConfirmRequest(email: email, code: code, newPassword: newPassword)
        return try await self.confirmPasswordReset(body, hiding: [code, newPassword])
    }

    /// Changes the signed-in user's password (`POST /api/v1/auth/change-password`, with the session's bearer).
    ///
    /// The server revokes the user's other sessions (this one goes on) and every device credential of the user but this
    /// device's, whose key the request proves; it mails the verified address a notice.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_credentials` when `current` is wrong (the session is kept, and not refreshed),
    ///   ``LatchkeyError/rejected(_:)`` `weak_password`, ``LatchkeyError/notSignedIn``, ``LatchkeyError/rejected(_:)`` `email_not_configured`, and the
    ///   errors of ``send(_:)``. No error text contains either password.
    @discardableResult
    public func changePassword(current: String, new: String) async throws -> PasswordChangedResponse {
        let body = ChangePasswordRequest(currentPassword: current, newPassword: new)
        var request = try LatchkeyRequest.post("/api/v1/auth/change-password", json: body, auth: .bearer)
        request.provesDevice = true
        return try await self.sendEmailRequest(request, decoding: PasswordChangedResponse.self, hiding: [current, new])
    }

    /// Removes the signed-in user's email address and password (`DELETE /api/v1/users/me/email`): they no longer sign
    /// in, and the user's other sessions end. Like adding one, it needs a recent sign-in (the request proves the device
    /// key).
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `reauthentication_required`, ``LatchkeyError/rejected(_:)`` with 409
    ///   `last_sign_in_method` when the address is the user's only way to sign in, ``LatchkeyError/rejected(_:)`` `email_not_configured`,
    ///   and the errors of ``send(_:)``.
    @discardableResult
    public func removeEmail() async throws -> EmailRemovedResponse {
        var request = LatchkeyRequest(method: "DELETE", path: "/api/v1/users/me/email", auth: .bearer)
        request.provesDevice = true
        return try await self.sendEmailRequest(request, decoding: EmailRemovedResponse.self, hiding: [])
    }

    /// Whether a Latchkey session (one with a user and a refresh token, not a guest's or an access code) is in use.
    private func hasSessionToAttachTo() throws -> Bool {
        guard self.configuration.tokenProvider == nil else { return false }
        return try self.loadCredentials().session?.kind == .session
    }

    private func verifyEmail(_ body: VerifyEmailRequest, hiding secret: String) async throws -> EmailAccountResponse {
        let request = try LatchkeyRequest.post("/api/v1/auth/verify-email", json: body, auth: .none)
        let account = try await self.sendEmailRequest(request, decoding: EmailAccountResponse.self, hiding: [secret])
        if let waiting = self.emailAwaitingVerification, waiting.caseInsensitiveCompare(account.email) == .orderedSame {
            self.emailAwaitingVerification = nil
        }
        return account
    }

    /// Confirms a reset, then ends the session here when it was the user's: the server revoked it.
    private func confirmPasswordReset(_ body: ResetPasswordConfirmRequest, hiding secrets: [String?]) async throws -> PasswordChangedResponse {
        var request = try LatchkeyRequest.post("/api/v1/auth/reset-password/confirm", json: body, auth: .none)
        request.provesDevice = true
        let changed = try await self.sendEmailRequest(request, decoding: PasswordChangedResponse.self, hiding: secrets)
        if let session = (try? self.loadCredentials())?.session, session.kind == .session,
            session.userID.caseInsensitiveCompare(changed.userID) == .orderedSame
        {
            self.endSession(.signedOut(reason: .revoked), reason: .revoked)
        }
        return changed
    }

    /// Sends a request to an email and password route. A 404 `not_found` there means the server sends no mail, so the
    /// routes are off; no error text keeps any of `secrets` or the session's tokens.
    private func sendEmailRequest<Response: Decodable>(
        _ request: LatchkeyRequest, decoding type: Response.Type, hiding secrets: [String?]
    ) async throws -> Response {
        do {
            return try await self.send(request, decoding: type, hiding: secrets)
        } catch let error as LatchkeyError where error.isNotFound {
            throw LatchkeyError.rejected(.emailNotConfigured, status: 404)
        }
    }
}
