import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyClient

/// Issue 33, the SDK's data calls: adding a passkey, signing in with one on a new phone, and listing, renaming and
/// removing them, each against a stubbed server.
@Suite struct PasskeyTests {
    static let created = Date(timeIntervalSince1970: 1_800_000_000)
    static let passkey = PasskeyResponse(passkeyID: "pk-1", name: "iPhone", createdAt: Self.created, backedUp: true)

    static let creationOptions = PasskeyRegistrationOptionsResponse(
        challengeID: "challenge-1",
        options: PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: "example.com", name: "Mystica"),
            user: .init(id: Base64URL.encode([UInt8](repeating: 7, count: 16)), name: "a@example.com", displayName: "a@example.com"),
            challenge: Base64URL.encode([UInt8](repeating: 1, count: 32)), pubKeyCredParams: [.init(alg: -7), .init(alg: -8), .init(alg: -257)],
            timeout: 300_000, excludeCredentials: [.init(id: Base64URL.encode([9, 9, 9]))],
            authenticatorSelection: .init(userVerification: "required")))

    static let requestOptions = PasskeyAuthenticationOptionsResponse(
        challengeID: "challenge-2",
        options: PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URL.encode([UInt8](repeating: 2, count: 32)), timeout: 300_000, rpId: "example.com", userVerification: "required"))

    static let registration = RegistrationResponseJSON(
        credentialID: Data([1, 2, 3]), clientDataJSON: Data("{}".utf8), attestationObject: Data([0xa0]))
    static let assertion = AuthenticationResponseJSON(
        credentialID: Data([1, 2, 3]), clientDataJSON: Data("{}".utf8), authenticatorData: Data([5]), signature: Data([6]), userHandle: Data([7]))

    // MARK: Adding a passkey

    @Test func registrationOptionsArePostedWithTheSessionsBearerAndAProof() async throws {
        let fixture = Fixture { _ in .json(200, Self.creationOptions) }
        try fixture.storeSession()

        let started = try await fixture.session().passkeyRegistrationOptions()

        #expect(started == Self.creationOptions)
        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/passkeys/register/options"])
        #expect(sent.method == "POST")
        #expect(sent.bearer == "access-1")
        #expect(sent.header(DPoPProof.header) != nil)
    }

    @Test func finishingARegistrationSendsTheChallengeTheCredentialAndTheName() async throws {
        let fixture = Fixture { _ in .json(201, Self.passkey) }
        try fixture.storeSession()

        let passkey = try await fixture.session().finishPasskeyRegistration(
            PasskeyRegistrationRequest(challengeID: "challenge-1", credential: Self.registration, name: "iPhone"))

        #expect(passkey == Self.passkey)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/passkeys/register")
        #expect(sent.method == "POST")
        #expect(sent.bearer == "access-1")
        #expect(sent.header(DPoPProof.header) != nil)
        let body = try #require(sent.jsonObject())
        #expect(Set(body.keys) == ["challenge_id", "credential", "name"])
        #expect(body["challenge_id"] as? String == "challenge-1")
        #expect(try sent.decodeBody(PasskeyRegistrationRequest.self).credential == Self.registration)
    }

    @Test func aCredentialRegisteredAlreadyIsRefusedWithItsCode() async throws {
        let fixture = Fixture { _ in .error(409, .passkeyExists, "Already registered.") }
        try fixture.storeSession()
        let error = await thrownError {
            try await fixture.session().finishPasskeyRegistration(PasskeyRegistrationRequest(challengeID: "c", credential: Self.registration))
        }
        #expect(error == .refusal(409, .passkeyExists, "Already registered."))
        #expect(error?.description == "This passkey is already registered.")
    }

    @Test func aServerWithoutPasskeysSaysSo() async throws {
        let fixture = Fixture { _ in .error(404, .passkeysDisabled, "Passkeys are off: set passkeys.rp-id.") }
        try fixture.storeSession()
        let error = await thrownError { try await fixture.session().passkeyRegistrationOptions() }
        #expect(error == .refusal(404, .passkeysDisabled, "Passkeys are off: set passkeys.rp-id."))
        #expect(error?.description == "This server does not offer passkeys.")
    }

    // MARK: Signing in with a passkey

    @Test func authenticationOptionsCarryNoCredentials() async throws {
        let fixture = Fixture { _ in .json(200, Self.requestOptions) }
        try fixture.storeSession()

        let started = try await fixture.session().passkeyAuthenticationOptions()

        #expect(started == Self.requestOptions)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/passkeys/authenticate/options")
        #expect(sent.method == "POST")
        #expect(sent.header("Authorization") == nil)
        #expect(sent.header(DPoPProof.header) == nil)
    }

    @Test func aNewPhoneSignsInSendingItsDeviceIDAndAProofAndNoBearer() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(1, userID: "passkey-user")) }
        let session = fixture.session()
        let deviceID = try await session.deviceID().uuidString.lowercased()

        let signedIn = try await session.finishPasskeySignIn(
            PasskeyAuthenticationRequest(challengeID: "challenge-2", credential: Self.assertion, deviceID: "another-device"))

        #expect(signedIn.userID == "passkey-user")
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/passkeys/authenticate")
        #expect(sent.method == "POST")
        #expect(sent.header("Authorization") == nil)
        #expect(sent.header(DPoPProof.header) != nil)
        let body = try sent.decodeBody(PasskeyAuthenticationRequest.self)
        #expect(body == PasskeyAuthenticationRequest(challengeID: "challenge-2", credential: Self.assertion, deviceID: deviceID))
        #expect(try fixture.store.load()?.session?.refreshToken == "refresh-1")
        #expect(await session.state == .signedIn(signedIn))
    }

    @Test func withoutADeviceKeyTheSignInCarriesNoProofAndKeepsTheNewDevicesSecret() async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(1, userID: "passkey-user", secret: "device-secret-1")) }
        let session = fixture.session { $0.usesDeviceKey = false }
        try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: "c", credential: Self.assertion))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.header(DPoPProof.header) == nil)
        #expect(sent.jsonObject()?["device_id"] as? String == fixture.defaults.string(forKey: "latchkey.device-id")?.lowercased())
        #expect(try fixture.store.load()?.deviceSecret == "device-secret-1")
    }

    @Test func signedInAsItsOwnDeviceUserTheInstallKeepsItsDeviceAndSendsNoDeviceID() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/passkeys/authenticate" ? .json(200, Samples.pair(2, userID: "passkey-user")) : .json(200, Samples.profile())
        }
        try fixture.storeDeviceSession()
        let session = fixture.session()

        let signedIn = try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: "c", credential: Self.assertion))

        let body = try #require(fixture.transport.requests(to: "/api/v1/passkeys/authenticate").first?.jsonObject())
        #expect(Set(body.keys) == ["challenge_id", "credential"])
        #expect(signedIn.userID == "passkey-user")
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
    }

    @Test func anUnknownPasskeyIsRefusedAndTheSessionInUseIsKept() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/passkeys/authenticate"
                ? .error(401, .unknownCredential, "No such passkey.") : Samples.me(accepting: ["access-1"], request)
        }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()
        _ = await session.bootstrap()

        let error = await thrownError {
            try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: "c", credential: Self.assertion))
        }

        #expect(error == .refusal(401, .unknownCredential, "No such passkey."))
        #expect(error?.description == ErrorMessages.english["error.unknown_credential"])
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
        #expect(try fixture.store.load() == stored)
        #expect(await session.state.isSignedIn)
    }

    @Test func anAssertionThatDoesNotVerifyIsInvalidPasskey() async throws {
        let fixture = Fixture { _ in .error(400, .invalidPasskey, "The signature does not verify.") }
        let error = await thrownError {
            try await fixture.session().finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: "c", credential: Self.assertion))
        }
        #expect(error == .refusal(400, .invalidPasskey, "The signature does not verify."))
    }

    @Test func aPasskeyWithoutUserVerificationForAUserWithASecondFactorThrowsTheChallenge() async throws {
        let fixture = Fixture { _ in SecondFactorTests.mfaRequired }
        let session = fixture.session()
        let error = await thrownError {
            try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: "c", credential: Self.assertion))
        }
        #expect(error == .mfaRequired(SecondFactorTests.challenge))
        #expect(await !session.state.isSignedIn)
    }

    // MARK: The user's passkeys

    @Test func theListIsReadWithTheSessionsBearer() async throws {
        let fixture = Fixture { _ in .json(200, PasskeyListResponse(passkeys: [Self.passkey])) }
        try fixture.storeSession()
        #expect(try await fixture.session().passkeys() == [Self.passkey])
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.url.path == "/api/v1/passkeys")
        #expect(sent.bearer == "access-1")
    }

    @Test func renamingPatchesTheName() async throws {
        let fixture = Fixture { _ in .json(200, Self.passkey) }
        try fixture.storeSession()
        #expect(try await fixture.session().renamePasskey(id: "pk-1", name: "iPhone") == Self.passkey)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "PATCH")
        #expect(sent.url.path == "/api/v1/passkeys/pk-1")
        #expect(sent.bearer == "access-1")
        #expect(try sent.decodeBody(PasskeyRenameRequest.self) == PasskeyRenameRequest(name: "iPhone"))
    }

    @Test func removingDeletesWithAProof() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 204) }
        try fixture.storeSession()
        try await fixture.session().removePasskey(id: "pk-1")
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "DELETE")
        #expect(sent.url.path == "/api/v1/passkeys/pk-1")
        #expect(sent.bearer == "access-1")
        #expect(sent.header(DPoPProof.header) != nil)
    }

    @Test func anIDThatIsNotAPathSegmentIsRefusedWithoutSending() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session()
        #expect(await thrownError { try await session.removePasskey(id: "../users/me") } == .invalidRequest("../users/me is not a passkey ID"))
        #expect(await thrownError { try await session.renamePasskey(id: "", name: "x") } == .invalidRequest(" is not a passkey ID"))
        #expect(fixture.transport.requests.isEmpty)
    }
}
