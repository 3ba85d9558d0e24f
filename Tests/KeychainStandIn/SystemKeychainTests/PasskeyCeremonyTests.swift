// Run by scripts/check-keychain: `registerPasskey` and `signInWithPasskey`, compiled against the AuthenticationServices
// stand-in and run through its scripted controller, against a stubbed server.
import AuthenticationServices
import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite(.serialized)
@MainActor
struct PasskeyCeremonyTests {
    nonisolated static let userHandle = Data(repeating: 7, count: 16)
    nonisolated static let registrationChallenge = Data(repeating: 1, count: 32)
    nonisolated static let authenticationChallenge = Data(repeating: 2, count: 32)
    nonisolated static let credentialID = Data([0xfb, 0xff, 0x01])

    // MARK: Adding a passkey

    @Test func registeringRunsAPlatformRequestWithTheServersOptionsAndSendsItsCredential() async throws {
        let server = PasskeyServer()
        let session = LatchkeySession(
            configuration: .init(serverURL: AppleOnlyCodeTests.serverURL, reinstallPolicy: .keepSession),
            secureStore: AppleOnlyCodeTests.store(lifetime: 900), defaults: InMemoryKeyValueStore(), transport: server)
        StandInAuthenticator.script { _ in
            .credential(
                ASAuthorizationPlatformPublicKeyCredentialRegistration(
                    rawClientDataJSON: Data(#"{"type":"webauthn.create"}"#.utf8), credentialID: Self.credentialID, rawAttestationObject: Data([0xa0]))
            )
        }
        let window = StandInWindow()

        let passkey = try await session.registerPasskey(name: "iPhone", presentationAnchor: window)

        #expect(passkey == PasskeyServer.passkey)
        let performed = try #require(StandInAuthenticator.performed.first)
        let request = try #require(performed.request as? ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest)
        #expect(request.relyingPartyIdentifier == "example.com")
        #expect(request.challenge == Self.registrationChallenge)
        #expect(request.userID == Self.userHandle)
        #expect(request.name == "a@example.com")
        #expect(request.displayName == "Mystica player")
        #expect(request.userVerificationPreference == .required)
        #expect(request.attestationPreference == .none)
        #expect(request.excludedCredentials.map(\.credentialID) == [Data([9, 9, 9])])
        #expect(performed.options == [])
        #expect(performed.presentedOver === window)
        let sent = try #require(try server.body(PasskeyRegistrationRequest.self, sentTo: "/api/v1/passkeys/register"))
        #expect(sent.challengeID == "challenge-1")
        #expect(sent.name == "iPhone")
        #expect(
            sent.credential
                == RegistrationResponseJSON(
                    credentialID: Self.credentialID, clientDataJSON: Data(#"{"type":"webauthn.create"}"#.utf8), attestationObject: Data([0xa0])))
        #expect(sent.credential.rawId == "-_8B")
    }

    // MARK: Signing in

    @Test func signingInRunsAnAssertionRequestAndStartsThePasskeyUsersSessionWithThisDevice() async throws {
        let server = PasskeyServer()
        let session = LatchkeySession(
            configuration: .init(serverURL: AppleOnlyCodeTests.serverURL), secureStore: InMemorySecureStore(), defaults: InMemoryKeyValueStore(),
            transport: server)
        StandInAuthenticator.script { _ in
            .credential(
                ASAuthorizationPlatformPublicKeyCredentialAssertion(
                    rawClientDataJSON: Data(#"{"type":"webauthn.get"}"#.utf8), credentialID: Self.credentialID, rawAuthenticatorData: Data([5]),
                    userID: Self.userHandle, signature: Data([6])))
        }

        let signedIn = try await session.signInWithPasskey()

        #expect(signedIn.userID == "passkey-user")
        #expect(await session.state.isSignedIn)
        let performed = try #require(StandInAuthenticator.performed.first)
        let request = try #require(performed.request as? ASAuthorizationPlatformPublicKeyCredentialAssertionRequest)
        #expect(request.relyingPartyIdentifier == "example.com")
        #expect(request.challenge == Self.authenticationChallenge)
        #expect(request.userVerificationPreference == .required)
        #expect(request.allowedCredentials.isEmpty)
        #expect(performed.options == [])
        #expect(performed.presentedOver == nil)
        let sent = try #require(try server.body(PasskeyAuthenticationRequest.self, sentTo: "/api/v1/passkeys/authenticate"))
        #expect(sent.challengeID == "challenge-2")
        let deviceID = try await session.deviceID()
        #expect(sent.deviceID == deviceID.uuidString.lowercased())
        #expect(
            sent.credential
                == AuthenticationResponseJSON(
                    credentialID: Self.credentialID, clientDataJSON: Data(#"{"type":"webauthn.get"}"#.utf8), authenticatorData: Data([5]),
                    signature: Data([6]), userHandle: Self.userHandle))
    }

    // MARK: What the app can act on

    @Test func aClosedSheetIsCancelledAndNothingIsSent() async throws {
        let (session, server) = Self.freshInstall()
        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.canceled)) }
        #expect(await Self.code { try await session.signInWithPasskey() } == .passkeyCancelled)
        #expect(server.paths == ["/api/v1/passkeys/authenticate/options"])
    }

    @Test func onlyImmediatelyAvailableCredentialsEndingCancelledMeansNoPasskeyHere() async throws {
        let (session, _) = Self.freshInstall()
        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.canceled)) }
        #expect(await Self.code { try await session.signInWithPasskey(preferImmediatelyAvailableCredentials: true) } == .noPasskeyCredentials)
        #expect(StandInAuthenticator.performed.map(\.options) == [.preferImmediatelyAvailableCredentials])
        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.notInteractive)) }
        #expect(await Self.code { try await session.signInWithPasskey() } == .noPasskeyCredentials)
    }

    @Test func anAppWithoutTheDomainsAssociationIsNotAssociatedAndOtherFailuresAreTheSystems() async throws {
        let (session, _) = Self.freshInstall()
        let words = "Application with identifier ABCDE12345.com.example.mystica is not associated with domain example.com"
        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: words])) }
        let error = await Self.error { try await session.signInWithPasskey() }
        #expect((error as? LatchkeyError) == .rejected(.init(code: .passkeyNotAssociated, message: words)))

        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.failed, userInfo: [NSLocalizedDescriptionKey: "iCloud Keychain is off."])) }
        #expect((await Self.error { try await session.signInWithPasskey() } as? ASAuthorizationError)?.code == .failed)
    }

    @Test func aDeviceThatAlreadyHoldsTheUsersPasskeyIsPasskeyExists() async throws {
        let server = PasskeyServer()
        let session = LatchkeySession(
            configuration: .init(serverURL: AppleOnlyCodeTests.serverURL, reinstallPolicy: .keepSession),
            secureStore: AppleOnlyCodeTests.store(lifetime: 900), defaults: InMemoryKeyValueStore(), transport: server)
        StandInAuthenticator.script { _ in .failure(ASAuthorizationError(.matchedExcludedCredential)) }
        #expect(await Self.code { try await session.registerPasskey() } == .passkeyExists)
        #expect(server.paths == ["/api/v1/passkeys/register/options"])
    }

    @Test func cancellingTheCallingTaskClosesTheSheet() async throws {
        let (session, server) = Self.freshInstall()
        StandInAuthenticator.script { _ in .openUntilCancelled }
        let signingIn = Task { try await session.signInWithPasskey() }
        for _ in 0..<1000 where StandInAuthenticator.performed.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }

        signingIn.cancel()

        await #expect(throws: CancellationError.self) { try await signingIn.value }
        #expect(StandInAuthenticator.cancelCount == 1)
        #expect(server.paths == ["/api/v1/passkeys/authenticate/options"])
    }

    static func freshInstall() -> (LatchkeySession, PasskeyServer) {
        let server = PasskeyServer()
        let session = LatchkeySession(
            configuration: .init(serverURL: AppleOnlyCodeTests.serverURL), secureStore: InMemorySecureStore(), defaults: InMemoryKeyValueStore(),
            transport: server)
        return (session, server)
    }

    static func error(_ body: () async throws -> some Any) async -> (any Error)? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    static func code(_ body: () async throws -> some Any) async -> ErrorCode? {
        (await Self.error(body) as? LatchkeyError)?.code
    }
}

/// The passkey routes of a server, stubbed: fixed options, a passkey, a token pair. Records what was sent.
final class PasskeyServer: HTTPTransport, @unchecked Sendable {
    static let passkey = PasskeyResponse(passkeyID: "pk-1", name: "iPhone", createdAt: Date(timeIntervalSince1970: 1_800_000_000), backedUp: true)
    private let lock = NSLock()
    private var sent: [TransportRequest] = []

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        self.lock.withLock { self.sent.append(request) }
        switch request.url.path {
        case "/api/v1/passkeys/register/options":
            let options = PublicKeyCredentialCreationOptionsJSON(
                rp: .init(id: "example.com", name: "Mystica"),
                user: .init(id: Base64URL.encode(PasskeyCeremonyTests.userHandle), name: "a@example.com", displayName: "Mystica player"),
                challenge: Base64URL.encode(PasskeyCeremonyTests.registrationChallenge), pubKeyCredParams: [.init(alg: -7)], timeout: 300_000,
                excludeCredentials: [.init(id: Base64URL.encode([9, 9, 9]))], authenticatorSelection: .init(userVerification: "required"))
            return Self.json(200, PasskeyRegistrationOptionsResponse(challengeID: "challenge-1", options: options))
        case "/api/v1/passkeys/register":
            return Self.json(201, Self.passkey)
        case "/api/v1/passkeys/authenticate/options":
            let options = PublicKeyCredentialRequestOptionsJSON(
                challenge: Base64URL.encode(PasskeyCeremonyTests.authenticationChallenge), timeout: 300_000, rpId: "example.com",
                userVerification: "required")
            return Self.json(200, PasskeyAuthenticationOptionsResponse(challengeID: "challenge-2", options: options))
        case "/api/v1/passkeys/authenticate":
            let pair = TokenPairResponse(
                accessToken: "access-9", expiresIn: 900, refreshToken: "refresh-9", refreshTokenExpiresIn: 86400, userID: "passkey-user",
                sessionID: "s-9", deviceSecret: nil)
            return Self.json(200, pair)
        default:
            return TransportResponse(status: 404)
        }
    }

    var paths: [String] { self.lock.withLock { self.sent.map(\.url.path) } }

    func body<Body: Decodable>(_ type: Body.Type, sentTo path: String) throws -> Body? {
        guard let body = self.lock.withLock({ self.sent.last { $0.url.path == path }?.body }) else { return nil }
        return try JSONDecoder().decode(type, from: body)
    }

    static func json(_ status: Int, _ value: some Encodable) -> TransportResponse {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return TransportResponse(status: status, headers: ["Content-Type": "application/json"], body: try! encoder.encode(value))
    }
}
