import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Logging
import SQLKit
import Testing

/// The passkey routes of issue 33 as an app calls them, with ``SoftwareAuthenticator`` (the test peer) in the part of the
/// platform's authenticator: it makes real registrations and assertions, and the tests tamper with them.
extension TestServer {
    /// The relying party ID of ``withPasskeys(keys:clock:configure:)``.
    static let rpID = "latchkey.test"
    /// The origin its pages are served from: the default `passkeys.origins`.
    static let passkeyOrigin = "https://latchkey.test"

    /// A test server with passkeys on for ``rpID``: `passkeys.rp-id` and then `keys` as `latchkey serve` reads them (the
    /// `passkeys.*` settings, `limits.passkeys.*` and `email.app-name`), then `configure`.
    static func withPasskeys(
        keys: [String: String] = [:], clock: ManualClock = ManualClock(), logger: Logger? = nil,
        configure: (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        // Typed as a configuration file has them: "5" an integer, "5.0" a number of seconds.
        let keyed = try await LatchkeyConfiguration.load(
            overrides: ["passkeys.rp-id": Self.rpID].merging(keys) { $1 }.mapValues {
                Int($0).map { .int($0) } ?? Double($0).map { .double($0) } ?? .string($0)
            },
            configFile: nil, environment: [:])
        return try await TestServer.make(clock: clock, logger: logger) { configuration in
            configuration.passkeys = keyed.passkeys
            // Off, as the test servers' other limits are, unless the test sets it.
            if keys["limits.passkeys.limit"] == nil { configuration.passkeys.limit.limit = 0 }
            configuration.email.appName = keyed.email.appName
            configure(&configuration)
        }
    }
}

extension TestServer {
    /// How many sessions the user has (or has had revoked, with `revoked`), read from the database.
    func sessionCount(of userID: String, revoked: Bool = false) async throws -> Int {
        try await self.services.database.read { sql in
            let query: SQLQueryString =
                revoked
                ? "SELECT COUNT(*) AS n FROM sessions WHERE user_id = \(bind: userID) AND revoked_at IS NOT NULL"
                : "SELECT COUNT(*) AS n FROM sessions WHERE user_id = \(bind: userID)"
            return try await sql.raw(query).first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }
}

/// A ceremony's options as the server gave them: what the authenticator is asked to sign over.
struct PasskeyCeremony: Sendable {
    let challengeID: String
    /// The challenge's bytes.
    let challenge: [UInt8]
    /// A registration's user handle (the user UUID's 16 bytes); empty for a sign-in.
    let userHandle: [UInt8]
}

extension TestClientProtocol {
    // MARK: The routes

    /// `POST /api/v1/passkeys/register/options`.
    func passkeyRegistrationOptions(bearer: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/passkeys/register/options", bearer: bearer, json: "{}", headers: headers)
    }

    /// `POST /api/v1/passkeys/register` with `registration` as the browser's `RegistrationResponseJSON`.
    func finishPasskeyRegistration(
        _ challengeID: String, _ registration: PasskeyRegistration, name: String? = nil, bearer: String
    ) async throws
        -> TestResponse
    {
        try await self.finishPasskeyRegistration(challengeID, credentialJSON: registration.registrationResponseJSON(), name: name, bearer: bearer)
    }

    /// `POST /api/v1/passkeys/register` with `credentialJSON` as it is.
    func finishPasskeyRegistration(_ challengeID: String, credentialJSON: Data, name: String? = nil, bearer: String) async throws -> TestResponse {
        var body: [String: Any] = ["challenge_id": challengeID, "credential": try JSONSerialization.jsonObject(with: credentialJSON)]
        if let name { body["name"] = name }
        return try await self.send(.post, "/api/v1/passkeys/register", bearer: bearer, json: try Self.json(body))
    }

    /// `POST /api/v1/passkeys/authenticate/options`.
    func passkeyAuthenticationOptions() async throws -> TestResponse {
        try await self.send(.post, "/api/v1/passkeys/authenticate/options", json: "{}")
    }

    /// `POST /api/v1/passkeys/authenticate` with `assertion` as the browser's `AuthenticationResponseJSON`.
    func finishPasskeySignIn(
        _ challengeID: String, _ assertion: PasskeyAssertion, deviceID: String? = nil, headers: HTTPFields = [:]
    )
        async throws -> TestResponse
    {
        try await self.finishPasskeySignIn(challengeID, credentialJSON: assertion.authenticationResponseJSON(), deviceID: deviceID, headers: headers)
    }

    /// `POST /api/v1/passkeys/authenticate` with `credentialJSON` as it is.
    func finishPasskeySignIn(
        _ challengeID: String, credentialJSON: Data, deviceID: String? = nil, headers: HTTPFields = [:]
    ) async throws
        -> TestResponse
    {
        var body: [String: Any] = ["challenge_id": challengeID, "credential": try JSONSerialization.jsonObject(with: credentialJSON)]
        if let deviceID { body["device_id"] = deviceID }
        return try await self.send(.post, "/api/v1/passkeys/authenticate", json: try Self.json(body), headers: headers)
    }

    /// `GET /api/v1/passkeys`.
    func passkeys(bearer: String) async throws -> TestResponse {
        try await self.send(.get, "/api/v1/passkeys", bearer: bearer)
    }

    /// The user's passkeys, which must be listed.
    func passkeyList(bearer: String) async throws -> [PasskeyResponse] {
        let response = try await self.passkeys(bearer: bearer)
        guard response.status == .ok else { throw TestFailure("GET /api/v1/passkeys answered \(response.status): \(response.text)") }
        return try response.decode(PasskeyListResponse.self).passkeys
    }

    /// `PATCH /api/v1/passkeys/{id}`.
    func renamePasskey(_ id: String, to name: String, bearer: String) async throws -> TestResponse {
        try await self.send(.patch, "/api/v1/passkeys/\(id)", bearer: bearer, body: PasskeyRenameRequest(name: name))
    }

    /// `DELETE /api/v1/passkeys/{id}`.
    func removePasskey(_ id: String, bearer: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await self.send(.delete, "/api/v1/passkeys/\(id)", bearer: bearer, headers: headers)
    }

    // MARK: Ceremonies

    /// Registration options for the session `bearer`, which must be given.
    func beginPasskeyRegistration(bearer: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> PasskeyCeremony {
        let response = try await self.passkeyRegistrationOptions(bearer: bearer)
        guard response.status == .ok else { throw TestFailure("register/options answered \(response.status): \(response.text)") }
        let options = try response.decode(PasskeyRegistrationOptionsResponse.self)
        guard let challenge = LatchkeyAPI.Base64URL.decode(options.options.challenge),
            let handle = LatchkeyAPI.Base64URL.decode(options.options.user.id)
        else {
            throw TestFailure("register/options' challenge or user.id is not base64url: \(response.text)")
        }
        return PasskeyCeremony(challengeID: options.challengeID, challenge: challenge, userHandle: handle)
    }

    /// Sign-in options, which must be given.
    func beginPasskeySignIn() async throws -> PasskeyCeremony {
        let response = try await self.passkeyAuthenticationOptions()
        guard response.status == .ok else { throw TestFailure("authenticate/options answered \(response.status): \(response.text)") }
        let options = try response.decode(PasskeyAuthenticationOptionsResponse.self)
        guard let challenge = LatchkeyAPI.Base64URL.decode(options.options.challenge) else {
            throw TestFailure("authenticate/options' challenge is not base64url: \(response.text)")
        }
        return PasskeyCeremony(challengeID: options.challengeID, challenge: challenge, userHandle: [])
    }

    /// Adds a passkey of `authenticator` to the session `bearer`'s user, which must be done: the passkey.
    @discardableResult
    func addPasskey(
        _ authenticator: inout SoftwareAuthenticator, bearer: String, name: String? = nil,
        attestation: SoftwareAuthenticator.Attestation = .none
    ) async throws -> PasskeyResponse {
        let ceremony = try await self.beginPasskeyRegistration(bearer: bearer)
        let registration = authenticator.register(ceremony, attestation: attestation)
        let response = try await self.finishPasskeyRegistration(ceremony.challengeID, registration, name: name, bearer: bearer)
        guard response.status == .created else { throw TestFailure("register answered \(response.status): \(response.text)") }
        return try response.decode(PasskeyResponse.self)
    }

    /// Signs in with `authenticator`'s passkey (a fresh challenge, an assertion made for it): the answer.
    func signInWithPasskey(
        _ authenticator: inout SoftwareAuthenticator, deviceID: String? = nil, userVerified: Bool = true, headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        let ceremony = try await self.beginPasskeySignIn()
        let assertion = authenticator.assert(ceremony, userVerified: userVerified)
        return try await self.finishPasskeySignIn(ceremony.challengeID, assertion, deviceID: deviceID, headers: headers)
    }

    /// A device user with a passkey of `authenticator` (added by the device's first session): the device's token pair and
    /// the passkey.
    func deviceUserWithPasskey(
        _ authenticator: inout SoftwareAuthenticator, attestation: SoftwareAuthenticator.Attestation = .none
    ) async throws -> (device: TokenPairResponse, passkey: PasskeyResponse) {
        let device = try await self.registerDevice()
        let passkey = try await self.addPasskey(&authenticator, bearer: device.accessToken, attestation: attestation)
        return (device, passkey)
    }

    private static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

extension SoftwareAuthenticator {
    /// A registration for `ceremony`, made for the test server's relying party unless told otherwise.
    mutating func register(
        _ ceremony: PasskeyCeremony, rpID: String = TestServer.rpID, origin: String = TestServer.passkeyOrigin, userVerified: Bool = true,
        attestation: Attestation = .none
    ) -> PasskeyRegistration {
        self.register(
            rpID: rpID, origin: origin, challenge: ceremony.challenge, userHandle: ceremony.userHandle, userVerified: userVerified,
            attestation: attestation)
    }

    /// An assertion for `ceremony`, made for the test server's relying party unless told otherwise.
    mutating func assert(
        _ ceremony: PasskeyCeremony, rpID: String = TestServer.rpID, origin: String = TestServer.passkeyOrigin, userVerified: Bool = true
    ) -> PasskeyAssertion {
        self.assert(rpID: rpID, origin: origin, challenge: ceremony.challenge, userVerified: userVerified)
    }
}

extension TestResponse {
    /// Expects the 400 `invalid_passkey` of a registration or an assertion that did not verify.
    func expectInvalidPasskey(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == .badRequest, "\(self.status) \(self.text)", sourceLocation: sourceLocation)
        #expect(self.envelope?.error.code == .invalidPasskey, "\(self.text)", sourceLocation: sourceLocation)
    }
}
