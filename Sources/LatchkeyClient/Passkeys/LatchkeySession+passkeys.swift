import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Starts adding a passkey to the signed-in user (`POST /api/v1/passkeys/register/options`): the server answers with
    /// a single-use challenge and the options an authenticator takes (the relying party, the user handle, the user's
    /// passkeys to exclude). Create the credential with them, then pass it with `challengeID`
    /// to ``finishPasskeyRegistration(_:)``, from this same session.
    ///
    /// On Apple platforms `registerPasskey(name:presentationAnchor:)` does all three steps; this call and
    /// ``finishPasskeyRegistration(_:)`` are for an app that runs the authenticator itself (SwiftUI's
    /// `AuthorizationController`, another platform's API, a test's software authenticator).
    ///
    /// Adding a passkey adds a way in, so it needs what linking Sign in with Apple does: a recent sign-in (the request
    /// carries a proof of the device key, which gives it when the session was started with that key), and for a user
    /// with a second factor a recent step-up (see ``stepUp(code:)``).
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `passkeys_disabled` (404) when the server has no `passkeys.rp-id`,
    ///   `reauthentication_required`, `aal2_required`, `forbidden` for a guest, ``LatchkeyError/notSignedIn``, and the
    ///   errors of ``send(_:)``.
    public func passkeyRegistrationOptions() async throws -> PasskeyRegistrationOptionsResponse {
        var request = LatchkeyRequest(method: "POST", path: "/api/v1/passkeys/register/options", auth: .bearer)
        request.provesDevice = true
        return try await self.send(request, decoding: PasskeyRegistrationOptionsResponse.self)
    }

    /// Registers the credential an authenticator created from ``passkeyRegistrationOptions()``'s options
    /// (`POST /api/v1/passkeys/register`, with the bearer of the session that asked for them) and returns the new
    /// passkey. The challenge is spent whether or not the credential verifies.
    ///
    /// ```swift
    /// let started = try await session.passkeyRegistrationOptions()
    /// let credential: RegistrationResponseJSON = try await myAuthenticator.create(started.options)
    /// let passkey = try await session.finishPasskeyRegistration(
    ///     PasskeyRegistrationRequest(challengeID: started.challengeID, credential: credential, name: "iPhone"))
    /// ```
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_passkey` (400) when the credential does not verify or the
    ///   challenge is unknown, used, expired or another session's; `passkey_exists` (409) when the credential is
    ///   registered already; `invalid_request` for a name that is blank or longer than 64 characters; and the errors of
    ///   ``passkeyRegistrationOptions()``.
    public func finishPasskeyRegistration(_ registration: PasskeyRegistrationRequest) async throws -> PasskeyResponse {
        var request = try LatchkeyRequest.post("/api/v1/passkeys/register", json: registration, auth: .bearer)
        request.provesDevice = true
        return try await self.send(request, decoding: PasskeyResponse.self)
    }

    /// The signed-in user's passkeys (`GET /api/v1/passkeys`): names, when each was made and last used, and whether it
    /// is synced. Never a key.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `passkeys_disabled`, ``LatchkeyError/notSignedIn``, and the errors of
    ///   ``send(_:)``.
    public func passkeys() async throws -> [PasskeyResponse] {
        try await self.send(.get("/api/v1/passkeys", auth: .bearer), decoding: PasskeyListResponse.self).passkeys
    }

    /// Renames one of the signed-in user's passkeys (`PATCH /api/v1/passkeys/{id}`) and returns it.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `not_found` for an unknown passkey (or another user's),
    ///   `invalid_request` for a name that is blank or longer than 64 characters, ``LatchkeyError/invalidRequest(_:)``
    ///   without sending anything for an ID that cannot be a path segment, and the errors of ``send(_:)``.
    @discardableResult
    public func renamePasskey(id: String, name: String) async throws -> PasskeyResponse {
        let path = "/api/v1/passkeys/\(try LatchkeyRequest.pathSegment(id, naming: "passkey"))"
        var request = try LatchkeyRequest.post(path, json: PasskeyRenameRequest(name: name), auth: .bearer)
        request.method = "PATCH"
        request.provesDevice = true
        return try await self.send(request, decoding: PasskeyResponse.self)
    }

    /// Removes one of the signed-in user's passkeys (`DELETE /api/v1/passkeys/{id}`): it signs in no more. Sessions it
    /// started go on, and nothing else is revoked. Like adding one, it needs a recent sign-in and, for a user with a
    /// second factor, a recent step-up.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `reauthentication_required`, `aal2_required` (see ``stepUp(code:)``),
    ///   `not_found` for an unknown passkey, ``LatchkeyError/invalidRequest(_:)`` without sending anything for an ID that
    ///   cannot be a path segment, and the errors of ``send(_:)``.
    public func removePasskey(id: String) async throws {
        let path = "/api/v1/passkeys/\(try LatchkeyRequest.pathSegment(id, naming: "passkey"))"
        var request = LatchkeyRequest(method: "DELETE", path: path, auth: .bearer)
        request.provesDevice = true
        _ = try await self.send(request)
    }
}
