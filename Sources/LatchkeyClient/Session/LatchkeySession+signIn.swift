import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Registers this device (`POST /api/v1/auth/register-device`) and starts its session: instant play, no sign-up.
    ///
    /// The device proves itself with its ``DeviceKey`` (a DPoP proof over the server's nonce): the first registration
    /// binds the key to the device, later ones (after sign-out or a reinstall) prove it again to get the same account
    /// back, and no secret travels. A device registered by an older SDK sends its stored device secret once more, with
    /// the proof, and is bound to its key from then on. Throws ``LatchkeyError/rejected(_:)`` `invalid_device_secret` when the server
    /// knows the device and this install cannot prove it is that device.
    ///
    /// When the server answers that the device UUID is not this install's to use (409: claimed through
    /// `users/register`, or its account deleted), the SDK starts a new device identity
    /// (``LatchkeyEvent/deviceIdentityReplaced(_:)``) and registers that, once.
    ///
    /// With ``Configuration/appAttest``, the first registration also carries the device's App Attest attestation
    /// (`app_attest`, over a challenge from `POST /api/v1/app-attest/challenge`); a challenge the server no longer knows
    /// (`invalid_challenge`) is replaced by a fresh one, once. The server's refusals are ``LatchkeyError/rejected(_:)``
    /// with `invalid_attestation`, `invalid_challenge` or `attestation_required`.
    ///
    /// On a phone restored from a backup (the device UUID came back in UserDefaults, its key did not), the server answers
    /// that this install cannot prove the device (`invalid_device_secret`): by default the SDK starts a new device identity
    /// (``DeviceIdentityChange/restoredFromBackup``) and registers that, once (see ``Configuration/restoredDevicePolicy``).
    ///
    /// Sign-ins run one at a time. A second `registerDevice()` while one is running (a double-tapped "Play") waits for it
    /// and returns the same session: one registration, one session. Called again after it finished, it registers again
    /// and replaces the session.
    @discardableResult
    public func registerDevice() async throws -> AuthSession {
        try await self.serializedSignIn(["register-device"]) { try await self.registerDeviceNow() }
    }

    private func registerDeviceNow() async throws -> AuthSession {
        do {
            return try await self.registerThisDevice()
        } catch let error as LatchkeyError where error.details?.status == 409 && (error.has(.deviceIDClaimed) || error.has(.userDeleted)) {
            try self.replaceDeviceIdentity(.idUnavailable)
            return try await self.registerThisDevice()
        } catch let error as LatchkeyError
            where error.has(.invalidDeviceSecret) && self.configuration.restoredDevicePolicy == .startNewIdentity
            && self.credentials?.deviceIDRestored == true
        {
            try self.replaceDeviceIdentity(.restoredFromBackup)
            return try await self.registerThisDevice()
        }
    }

    private func registerThisDevice() async throws -> AuthSession {
        let credentials = try self.loadCredentials()
        let pair = try await self.withAppAttest { proof in
            let body = RegisterDeviceRequest(
                deviceID: credentials.deviceID.uuidString.lowercased(), deviceSecret: credentials.deviceSecret, appAttest: proof?.evidence)
            var request = try LatchkeyRequest.post("/api/v1/auth/register-device", json: body, auth: .none)
            request.provesDevice = true
            let pair = try await self.send(request, decoding: TokenPairResponse.self)
            return (pair, pair.accessToken)
        }
        return try self.begin(self.storedSession(from: pair), deviceSecret: pair.deviceSecret, registeredDevice: true)
    }

    /// Creates (or finds) the user whose ID is this device's UUID (`POST /api/v1/users/register`, the Stori flow);
    /// support staff can then issue an access code for it. Returns whether the user was created by this call.
    ///
    /// Runs after the sign-ins started before it; a second call while one is running joins it (one request, the same
    /// answer).
    @discardableResult
    public func registerUser() async throws -> Bool {
        try await self.serializedSignIn(["register-user"]) {
            let body = RegisterUserRequest(userID: try await self.deviceID().uuidString.lowercased())
            return try await self.send(try .post("/api/v1/users/register", json: body, auth: .none), decoding: RegisterUserResponse.self).created
        }
    }

    /// Starts a guest session (`POST /api/v1/auth/guest` with `X-Device-ID`): a short-lived token without refresh.
    ///
    /// With ``Configuration/appAttest``, the request carries the device's App Attest proof: its attestation as
    /// `{"app_attest": …}` until the server has accepted one, then an assertion (`X-App-Attest-Assertion` over this
    /// request, with the fresh challenge it covers in `X-App-Attest-Challenge`). The server answers an unattested device
    /// that its policy refuses with ``LatchkeyError/rejected(_:)`` `attestation_required`. An attested device whose key
    /// is gone (a restore onto another phone) is refused `invalid_assertion`: the server takes no new key for an attested
    /// guest device ID, so ``resetDeviceIdentity()`` goes on as a new guest device.
    ///
    /// When the token is about to expire the session ends (``AuthState/signedOut(reason:)`` with ``SignOutReason/sessionExpired``, or ``AuthState/signedOut(reason:)``
    /// at launch) and the app asks for a new guest token. Runs after the sign-ins started before it; a second call while
    /// one is running joins it.
    @discardableResult
    public func continueAsGuest() async throws -> GuestLimitations {
        try await self.serializedSignIn(["guest"]) { try await self.continueAsGuestNow() }
    }

    private func continueAsGuestNow() async throws -> GuestLimitations {
        let path = "/api/v1/auth/guest"
        // An attested device's assertion covers the request's body: this one has none.
        let guest = try await self.withAppAttest(asserting: (path, Data())) { proof in
            var request = LatchkeyRequest(method: "POST", path: path, auth: .deviceID).proving(proof)
            if let evidence = proof?.evidence {
                request.headers["Content-Type"] = "application/json"
                request.body = try Self.appAttestEncoder.encode(GuestSessionRequest(appAttest: evidence))
            }
            let response = try await self.send(request)
            guard let guest = try? JSONDecoder().decode(GuestSessionResponse.self, from: response.body) else { throw LatchkeyError.invalidResponse }
            return (guest, guest.accessToken)
        }
        let deviceID = try self.deviceID().uuidString.lowercased()
        let userID = UnverifiedJWT.subject(of: guest.accessToken) ?? deviceID
        let session = StoredSession(
            kind: .guest, userID: userID, accessToken: guest.accessToken,
            accessTokenExpiresAt: self.clock.now().addingTimeInterval(TimeInterval(guest.expiresIn)))
        _ = try self.begin(session)
        return guest.limitations ?? GuestLimitations()
    }

    /// Checks an access code with `GET /api/v1/validate-token`, then stores it as the session's bearer (the Stori flow).
    ///
    /// By default a code whose `sub` is not this device's UUID is refused with ``LatchkeyError/rejected(_:)`` `access_code_for_another_device`
    /// (see ``Configuration/requireAccessCodeForThisDevice``). With `exchange`, the code is instead traded for a
    /// session with a refresh token (`POST /api/v1/auth/access-code/exchange`). Runs after the sign-ins started before
    /// it; a second call with the same code while one is running joins it.
    @discardableResult
    public func redeemAccessCode(_ code: String, exchange: Bool = false) async throws -> AuthSession {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await self.serializedSignIn(["access-code", code, String(exchange)]) {
            try await self.redeemAccessCodeNow(code, exchange: exchange)
        }
    }

    private func redeemAccessCodeNow(_ code: String, exchange: Bool) async throws -> AuthSession {
        let validation: ValidateTokenResponse
        do {
            let request = LatchkeyRequest(method: "GET", path: "/api/v1/validate-token", headers: ["Authorization": "Bearer \(code)"], auth: .none)
            validation = try await self.send(request, decoding: ValidateTokenResponse.self)
        } catch let error as LatchkeyError where error.details?.status == 401 {
            throw LatchkeyError.rejected(.invalidAccessCode, status: 401)
        }
        let deviceID = try self.deviceID().uuidString
        if self.configuration.requireAccessCodeForThisDevice, validation.sub.caseInsensitiveCompare(deviceID) != .orderedSame {
            throw LatchkeyError.rejected(.accessCodeForAnotherDevice)
        }
        if exchange {
            var request = try LatchkeyRequest.post(
                "/api/v1/auth/access-code/exchange", json: AccessCodeExchangeRequest(accessCode: code), auth: .none)
            request.provesDevice = true
            let pair = try await self.send(request, decoding: TokenPairResponse.self)
            return try self.begin(self.storedSession(from: pair))
        }
        let kind: SessionKind = validation.kind == .accessCode ? .accessCode : validation.kind == .guest ? .guest : .session
        let session = StoredSession(
            kind: kind, userID: validation.sub, accessToken: code, accessTokenExpiresAt: Date(timeIntervalSince1970: TimeInterval(validation.exp)))
        return try self.begin(session)
    }

    /// The signed-in user's profile (`GET /api/v1/auth/me`).
    public func currentUser() async throws -> UserProfile {
        try await self.send(.get("/api/v1/auth/me", auth: .bearer), decoding: UserProfile.self)
    }

    /// Signs out: the session is cleared locally at once (the device identity stays), then revoked on the server.
    ///
    /// Local sign-out happens even when the server cannot be reached; the server error is then thrown so the app can
    /// say so (e.g. a `global` sign-out did not reach the other devices). A refresh still in flight cannot bring the
    /// session back.
    public func signOut(scope: LogoutScope = .local) async throws {
        let session = (try? self.loadCredentials())?.session
        self.endSession(.signedOut(reason: .requested), reason: .requested)
        guard self.configuration.tokenProvider == nil, let session, session.kind == .session else { return }
        var token = session.accessToken
        if self.isExpiring(session), let refreshToken = session.refreshToken,
            let response = try? await self.requestRefresh(refreshToken), response.status == 200,
            let pair = try? JSONDecoder().decode(TokenPairResponse.self, from: response.body)
        {
            token = pair.accessToken  // used only to revoke, never stored
        }
        let request = TransportRequest(
            method: "POST", url: try self.url(for: "/api/v1/auth/logout"),
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
            body: try JSONEncoder().encode(LogoutRequest(scope: scope)))
        let response = try await self.perform(request)
        if response.status == 401 { return }  // the server had already ended it
        _ = try self.check(response)
    }
}
