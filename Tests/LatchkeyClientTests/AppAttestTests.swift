import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// App Attest in `registerDevice()` and `continueAsGuest()` (issue 34), against a fake service and a stubbed server.
@Suite struct AppAttestTests {
    /// SHA-256 of the first challenge's 32 bytes (0xe0…0xff): the attestation's client data hash.
    static let attestationHash = "9432c1a7d343fcfacb164bdc44ff71c1281c004886b1c428419088d06cd3561a"
    /// SHA-256 of the second challenge's 32 bytes (0x11 × 32).
    static let secondAttestationHash = "02d449a31fbb267c8f352e9968a79e3e5fc95c1bbeaa502fd6454ebde5a4bedc"
    /// SHA-256("POST" ‖ "/api/v1/auth/guest" ‖ SHA-256("") ‖ the first challenge's bytes): a bodiless guest request's
    /// assertion client data hash.
    static let guestAssertionHash = "8e6302ddd7375f77b755049dec7667ca5bdfd31783d590690f00358eae847804"
    /// The same over the second challenge's bytes.
    static let secondGuestAssertionHash = "2eb827d0e182cd2f3189e3979d20df3491e5dc71b1d7a4c7c73d67cf581cc4e7"

    let server = AppAttestServer()
    let service = FakeAppAttestService()
    let fixture: Fixture

    init() {
        let server = self.server
        self.fixture = Fixture { request in server.answer(request) }
    }

    func session(_ provider: AppAttestProvider? = nil) -> LatchkeySession {
        let provider = provider ?? AppAttestProvider(service: self.service)
        return self.fixture.session { $0.appAttest = provider }
    }

    var paths: [String] { self.fixture.transport.requests.map(\.url.path) }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// The `app_attest` object of a JSON body, as sent.
    static func appAttest(in request: TransportRequest?) throws -> [String: String]? {
        let body = try #require(request?.body)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        return object["app_attest"] as? [String: String]
    }

    // MARK: Off, unsupported, debug tokens

    @Test func appAttestIsOffByDefaultAndNoChallengeIsFetched() async throws {
        let session = self.fixture.session()
        try await session.registerDevice()
        _ = try await session.continueAsGuest()
        #expect(self.paths == ["/api/v1/auth/register-device", "/api/v1/auth/guest"])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.first) == nil)
        let guest = try #require(self.fixture.transport.requests.last)
        #expect(guest.body == nil)
        #expect(guest.header(LatchkeyHeader.appAttestAssertion) == nil)
        #expect(guest.header(LatchkeyHeader.appAttestChallenge) == nil)
    }

    @Test func anUnsupportedDeviceSignsInUnattestedWithoutAChallenge() async throws {
        let session = self.session(AppAttestProvider(service: FakeAppAttestService(isSupported: false)))
        try await session.registerDevice()
        _ = try await session.continueAsGuest()
        #expect(self.paths == ["/api/v1/auth/register-device", "/api/v1/auth/guest"])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.first) == nil)
        #expect(try self.fixture.store.load()?.appAttestKeyID == nil)
    }

    @Test func aDebugTokenIsSentWithEverySignInAndNeverDescribed() async throws {
        let provider = AppAttestProvider.debugToken("dbg-secret-1")
        let session = self.session(provider)
        try await session.registerDevice()
        _ = try await session.continueAsGuest()
        _ = try await session.continueAsGuest()
        #expect(self.paths == ["/api/v1/auth/register-device", "/api/v1/auth/guest", "/api/v1/auth/guest"])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.first) == ["debug_token": "dbg-secret-1"])
        for guest in self.fixture.transport.requests(to: "/api/v1/auth/guest") {
            #expect(guest.body == Data(#"{"app_attest":{"debug_token":"dbg-secret-1"}}"#.utf8))
            #expect(guest.header("Content-Type") == "application/json")
        }
        #expect(!String(describing: provider).contains("dbg-secret-1"))
        #expect(!String(reflecting: provider).contains("dbg-secret-1"))
        #expect(!String(describing: session.configuration.appAttest).contains("dbg-secret-1"))
        #expect(!String(describing: session.configuration).contains("dbg-secret-1"))
    }

    // MARK: Attestation

    @Test func registerDeviceAttestsANewKeyOverTheChallengesBytesAndEchoesTheChallenge() async throws {
        try await self.session().registerDevice()
        #expect(self.paths == ["/api/v1/app-attest/challenge", "/api/v1/auth/register-device"])
        let challengeRequest = try #require(self.fixture.transport.requests.first)
        #expect(challengeRequest.method == "POST")
        #expect(challengeRequest.body == nil)
        #expect(self.service.attestations.map(\.keyID) == ["key-1"])
        #expect(self.service.attestations.map { Self.hex($0.clientDataHash) } == [Self.attestationHash])
        let sent = try #require(try Self.appAttest(in: self.fixture.transport.requests.last))
        #expect(
            sent == [
                "key_id": "key-1", "attestation_object": FakeAppAttestService.attestationObject("key-1").base64EncodedString(),
                "challenge": AppAttestServer.challenges[0],
            ])
        let stored = try #require(try self.fixture.store.load())
        #expect(stored.appAttestKeyID == "key-1")
        #expect(stored.appAttestKeyAttested)
    }

    @Test func aGuestOfAnUnattestedDeviceSendsItsAttestationAsTheBody() async throws {
        _ = try await self.session().continueAsGuest()
        #expect(self.paths == ["/api/v1/app-attest/challenge", "/api/v1/auth/guest"])
        let guest = try #require(self.fixture.transport.requests.last)
        let object = FakeAppAttestService.attestationObject("key-1").base64EncodedString()
        let expected =
            #"{"app_attest":{"attestation_object":""# + object + #"","challenge":""# + AppAttestServer.challenges[0]
            + #"","key_id":"key-1"}}"#
        #expect(guest.body == Data(expected.utf8))
        #expect(guest.header(LatchkeyHeader.deviceID) != nil)
        #expect(guest.header(LatchkeyHeader.appAttestAssertion) == nil)
        #expect(self.service.attestations.map { Self.hex($0.clientDataHash) } == [Self.attestationHash])
    }

    @Test func anAttestationTheServerDidNotMarkIsNotTakenForAttested() async throws {
        self.server.refuseNext("/api/v1/auth/register-device", with: .json(201, Samples.pair(1)))  // no `att` (policy off)
        let session = self.session()
        try await session.registerDevice()
        #expect(try self.fixture.store.load()?.appAttestKeyAttested == false)
        _ = try await session.continueAsGuest()
        #expect(self.service.assertions.isEmpty)
        #expect(self.service.attestations.map(\.keyID) == ["key-1", "key-1"])  // the same key, attested again
    }

    // MARK: Assertion

    @Test func aGuestOfAnAttestedDeviceSendsAnAssertionOverTheRequestAndItsFreshChallenge() async throws {
        let session = self.session()
        try await session.registerDevice()
        _ = try await session.continueAsGuest()
        #expect(
            self.paths == [
                "/api/v1/app-attest/challenge", "/api/v1/auth/register-device", "/api/v1/app-attest/challenge", "/api/v1/auth/guest",
            ])
        #expect(self.service.assertions.map(\.keyID) == ["key-1"])
        #expect(self.service.assertions.map { Self.hex($0.clientDataHash) } == [Self.secondGuestAssertionHash])
        let guest = try #require(self.fixture.transport.requests.last)
        #expect(guest.body == nil)
        #expect(guest.header(LatchkeyHeader.appAttestAssertion) == FakeAppAttestService.assertion("key-1").base64EncodedString())
        #expect(guest.header(LatchkeyHeader.appAttestChallenge) == AppAttestServer.challenges[1])
        #expect(self.service.attestations.count == 1)
    }

    @Test func theGuestAssertionHashIsThePinnedOne() async throws {
        try self.fixture.store.save(StoredCredentials(deviceID: UUID(), appAttestKeyID: "key-7", appAttestKeyAttested: true))
        _ = try await self.session().continueAsGuest()
        #expect(self.service.assertions == [.init(keyID: "key-7", clientDataHash: try #require(Self.data(hex: Self.guestAssertionHash)))])
        #expect(self.fixture.transport.requests.last?.header(LatchkeyHeader.appAttestChallenge) == AppAttestServer.challenges[0])
    }

    @Test func aKeyTheServiceLostIsReplacedAndAttestedOverTheSameChallenge() async throws {
        try self.fixture.store.save(StoredCredentials(deviceID: UUID(), appAttestKeyID: "key-lost", appAttestKeyAttested: true))
        self.service.failNextAssertions(AppAttestServiceError.invalidKey)
        _ = try await self.session().continueAsGuest()
        #expect(self.paths == ["/api/v1/app-attest/challenge", "/api/v1/auth/guest"])
        #expect(self.service.attestations.map(\.keyID) == ["key-1"])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.last)?["challenge"] == AppAttestServer.challenges[0])
        #expect(try self.fixture.store.load()?.appAttestKeyID == "key-1")
    }

    // MARK: Keys refused by the service

    @Test func anInvalidKeyGetsANewKeyAndOneReattestation() async throws {
        try self.fixture.store.save(StoredCredentials(deviceID: UUID(), appAttestKeyID: "key-old"))
        self.service.failNextAttestations(AppAttestServiceError.invalidKey)
        try await self.session().registerDevice()
        #expect(self.service.attestations.map(\.keyID) == ["key-old", "key-1"])
        #expect(self.service.attestations.map { Self.hex($0.clientDataHash) } == [Self.attestationHash, Self.attestationHash])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.last)?["key_id"] == "key-1")
        #expect(try self.fixture.store.load()?.appAttestKeyID == "key-1")
    }

    @Test func aSecondInvalidKeySignsInUnattestedInsteadOfLooping() async throws {
        self.service.failNextAttestations(AppAttestServiceError.invalidKey, AppAttestServiceError.invalidKey, AppAttestServiceError.invalidKey)
        try await self.session().registerDevice()
        #expect(self.service.attestations.count == 2)
        #expect(self.service.generatedKeys == 2)
        #expect(self.paths == ["/api/v1/app-attest/challenge", "/api/v1/auth/register-device"])
        #expect(try Self.appAttest(in: self.fixture.transport.requests.last) == nil)
    }

    @Test func aServerWithoutAppAttestIsSignedInToUnattested() async throws {
        self.server.refuseNext("/api/v1/app-attest/challenge", with: .error(404, .notFound, "app-attest.policy is off"))
        try await self.session().registerDevice()
        #expect(self.paths == ["/api/v1/app-attest/challenge", "/api/v1/auth/register-device"])
        #expect(self.service.generatedKeys == 0)
        #expect(try Self.appAttest(in: self.fixture.transport.requests.last) == nil)
    }

    // MARK: The server's refusals

    @Test func anInvalidChallengeIsRetriedOnceWithAFreshOne() async throws {
        self.server.refuseNext("/api/v1/auth/register-device", with: .error(400, .invalidChallenge))
        try await self.session().registerDevice()
        #expect(
            self.paths == [
                "/api/v1/app-attest/challenge", "/api/v1/auth/register-device", "/api/v1/app-attest/challenge", "/api/v1/auth/register-device",
            ])
        let sent = try self.fixture.transport.requests(to: "/api/v1/auth/register-device").map { try Self.appAttest(in: $0)?["challenge"] }
        #expect(sent == AppAttestServer.challenges)
        #expect(self.service.attestations.map { Self.hex($0.clientDataHash) } == [Self.attestationHash, Self.secondAttestationHash])
    }

    @Test func aGuestAssertionsInvalidChallengeIsRetriedOnceThenReported() async throws {
        try self.fixture.store.save(StoredCredentials(deviceID: UUID(), appAttestKeyID: "key-7", appAttestKeyAttested: true))
        self.server.refuseNext("/api/v1/auth/guest", with: .error(400, .invalidChallenge))
        self.server.refuseNext("/api/v1/auth/guest", with: .error(400, .invalidChallenge))
        let error = await thrownError { try await self.session().continueAsGuest() }
        #expect(error?.code == .invalidChallenge)
        #expect(error?.details?.status == 400)
        #expect(
            self.fixture.transport.requests(to: "/api/v1/auth/guest").map { $0.header(LatchkeyHeader.appAttestChallenge) }
                == AppAttestServer.challenges)
        #expect(self.service.assertions.count == 2)
    }

    @Test func aServerThatNoLongerKnowsTheDeviceAsAttestedGetsItsAttestationOnce() async throws {
        try self.fixture.store.save(StoredCredentials(deviceID: UUID(), appAttestKeyID: "key-7", appAttestKeyAttested: true))
        self.server.refuseNext("/api/v1/auth/guest", with: .error(403, .attestationRequired))
        _ = try await self.session().continueAsGuest()
        let guests = self.fixture.transport.requests(to: "/api/v1/auth/guest")
        #expect(guests.count == 2)
        #expect(guests.first?.header(LatchkeyHeader.appAttestAssertion) != nil)
        #expect(try Self.appAttest(in: guests.last)?["key_id"] == "key-7")
        #expect(try Self.appAttest(in: guests.last)?["challenge"] == AppAttestServer.challenges[1])
        #expect(try self.fixture.store.load()?.appAttestKeyAttested == true)
    }

    @Test(arguments: [
        (400, ErrorCode.invalidAttestation, "/api/v1/auth/register-device"),
        (403, ErrorCode.attestationRequired, "/api/v1/auth/register-device"),
        (401, ErrorCode.invalidAssertion, "/api/v1/auth/guest"),
        (403, ErrorCode.attestationRequired, "/api/v1/auth/guest"),
    ])
    func theServersRefusalsAreTypedErrors(status: Int, code: ErrorCode, path: String) async throws {
        self.server.refuseNext(path, with: .error(status, code, "refused"))
        let session = self.session()
        let error = await thrownError {
            path == "/api/v1/auth/guest" ? try await session.continueAsGuest() as Any : try await session.registerDevice() as Any
        }
        #expect(error == .rejected(.init(status: status, code: code, message: "refused")))
        #expect(error?.description != "refused")  // the SDK's own sentence for the code
        #expect(self.fixture.transport.requests(to: path).count == 1)
        #expect(await session.state.isSignedIn == false)
    }

    @Test func aRefusedAttestationForgetsTheKeySoTheNextSignInMakesANewOne() async throws {
        self.server.refuseNext("/api/v1/auth/register-device", with: .error(400, .invalidAttestation))
        let session = self.session()
        #expect(await thrownCode { try await session.registerDevice() } == .invalidAttestation)
        #expect(try self.fixture.store.load()?.appAttestKeyID == nil)
        try await session.registerDevice()
        #expect(self.service.attestations.map(\.keyID) == ["key-1", "key-2"])
    }

    static func data(hex: String) -> Data? {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }
}
