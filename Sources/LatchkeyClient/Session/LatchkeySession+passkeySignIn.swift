import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Starts a sign-in with a passkey (`POST /api/v1/passkeys/authenticate/options`, no credentials): the server
    /// answers with a single-use challenge and the options an authenticator takes. `allowCredentials` is empty: the
    /// authenticator offers the passkeys it holds for the relying party, so no user is named before the person picks one.
    /// Get an assertion with them, then pass it with `challengeID` to
    /// ``finishPasskeySignIn(_:)``.
    ///
    /// On Apple platforms `signInWithPasskey(presentationAnchor:preferImmediatelyAvailableCredentials:)` does both steps.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `passkeys_disabled` (404) when the server has no `passkeys.rp-id`,
    ///   ``LatchkeyError/rateLimited(_:)`` past `limits.passkeys`, and the errors of ``send(_:)``.
    public func passkeyAuthenticationOptions() async throws -> PasskeyAuthenticationOptionsResponse {
        try await self.send(
            LatchkeyRequest(method: "POST", path: "/api/v1/passkeys/authenticate/options", auth: .none),
            decoding: PasskeyAuthenticationOptionsResponse.self)
    }

    /// Signs in with a passkey's assertion (`POST /api/v1/passkeys/authenticate`) and starts the session the server
    /// returns for the passkey's user, as the other sign-ins do: it replaces the session in use and is stored. On a new
    /// phone, this is how a person gets their account back: the same user ID, with its data.
    ///
    /// ```swift
    /// let started = try await session.passkeyAuthenticationOptions()
    /// let assertion: AuthenticationResponseJSON = try await myAuthenticator.get(started.options)
    /// try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: started.challengeID, credential: assertion))
    /// ```
    ///
    /// The request carries a proof of the device key (when ``Configuration/usesDeviceKey`` is on), which binds the
    /// session to it, and this install's device UUID as `device_id`, which makes this device one of the user's (its
    /// `UserProfile.devices`); `deviceID` in `authentication` is replaced by it. The one exception: while this install
    /// is signed in as its own device user (``registerDevice()``'s session), its device belongs to that user and the server
    /// would refuse to move it, so no `device_id` is sent and the device stays that user's.
    ///
    /// The access token says how the person proved themselves: ``AuthSession/amr`` `[.hardwareKey, .user]` and `aal2`
    /// when the authenticator verified them (Face ID, a PIN). When it did not (a server with
    /// `passkeys.user-verification` `preferred`) and the user has a second factor, this throws
    /// ``LatchkeyError/mfaRequired(_:)``: finish with ``completeSignIn(_:code:)``.
    ///
    /// Runs after the sign-ins started before it; a second call with the same assertion while one is running joins it.
    /// On failure the session in use is kept.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_passkey` (400) when the assertion does not verify (signature,
    ///   counter, origin, relying party) or its challenge is unknown, used or expired (the challenge is spent either way:
    ///   start again); `unknown_credential` (401) when the server knows no such passkey, or its user is deleted or
    ///   disabled; `device_id_claimed` (409) when this device belongs to another user (this install registered it as its
    ///   own device user, then signed out: sign in with ``registerDevice()`` first, or ``resetDeviceIdentity()``);
    ///   `passkeys_disabled`; ``LatchkeyError/mfaRequired(_:)``; and the errors of ``send(_:)``.
    @discardableResult
    public func finishPasskeySignIn(_ authentication: PasskeyAuthenticationRequest) async throws -> AuthSession {
        let credential = authentication.credential
        return try await self.serializedSignIn(["passkey", authentication.challengeID, credential.rawId, credential.response.signature]) {
            try await self.finishPasskeySignInNow(authentication)
        }
    }

    private func finishPasskeySignInNow(_ authentication: PasskeyAuthenticationRequest) async throws -> AuthSession {
        var body = authentication
        body.deviceID = try self.deviceIDToJoin()
        // No bearer: a 401 here refuses the passkey, never the session in use, which is neither refreshed nor ended.
        var request = try LatchkeyRequest.post("/api/v1/passkeys/authenticate", json: body, auth: .none)
        request.provesDevice = true
        let pair = try await self.send(request, decoding: TokenPairResponse.self, hiding: [])
        // A device that joined without a key gets a secret, as at register-device: kept to register it again later.
        return try self.begin(self.storedSession(from: pair), deviceSecret: pair.deviceSecret, registeredDevice: body.deviceID != nil)
    }

    /// This install's device UUID, to join the user a passkey signs in; `nil` while the session in use is this device's
    /// own user's (the device is that user's, and stays so).
    private func deviceIDToJoin() throws -> String? {
        let credentials = try self.loadCredentials()
        let deviceID = credentials.deviceID.uuidString.lowercased()
        if self.configuration.tokenProvider == nil, let session = credentials.session, session.kind == .session,
            session.userID.caseInsensitiveCompare(deviceID) == .orderedSame
        {
            return nil
        }
        return deviceID
    }
}
