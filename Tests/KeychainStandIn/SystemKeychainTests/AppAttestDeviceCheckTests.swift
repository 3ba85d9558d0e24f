// Run by scripts/check-keychain: `AppAttestProvider.deviceCheck`, compiled against the DeviceCheck stand-in and run
// through its in-memory Secure Enclave, with the key ID in the stand-in system Keychain, against a stubbed server.
import DeviceCheck
import Foundation
import LatchkeyAPI
import LatchkeyClient
import Security
import Testing

// Nested in SystemKeychainTests, whose tests run one at a time: they share the stand-in Keychain.
extension SystemKeychainTests {
    @Suite struct AppAttestDeviceCheckTests {
        /// The server's challenges: 0xe0…0xff, then 0x11 × 32.
        static let challenges = ["4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=", "ERERERERERERERERERERERERERERERERERERERERERE="]
        /// SHA-256 of the first challenge's bytes: the client data hash of an attestation over it.
        static let attestationHash = "9432c1a7d343fcfacb164bdc44ff71c1281c004886b1c428419088d06cd3561a"
        /// SHA-256("POST" ‖ "/api/v1/auth/guest" ‖ SHA-256("") ‖ the second challenge's bytes): a guest assertion's.
        static let guestAssertionHash = "2eb827d0e182cd2f3189e3979d20df3491e5dc71b1d7a4c7c73d67cf581cc4e7"

        let server = AttestingServer()

        init() {
            StandInKeychain.shared.reset()
            StandInAppAttest.reset()
        }

        /// A session on the system Keychain (the stand-in) with Apple's App Attest provider.
        func session(keychainService: String = "com.example.attest") -> LatchkeySession {
            LatchkeySession(
                configuration: .init(serverURL: AppleOnlyCodeTests.serverURL, reinstallPolicy: .keepSession, appAttest: .deviceCheck),
                secureStore: KeychainStore(service: keychainService), defaults: InMemoryKeyValueStore(), transport: self.server)
        }

        static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

        @Test func anUnsupportedDeviceStaysUnattestedAndNothingCrashes() async throws {
            StandInAppAttest.isSupported = false
            let session = self.session()
            try await session.registerDevice()
            _ = try await session.continueAsGuest()
            #expect(self.server.paths == ["/api/v1/auth/register-device", "/api/v1/auth/guest"])
            #expect(StandInAppAttest.calls.isEmpty)
            #expect(try self.server.appAttest(sentTo: "/api/v1/auth/register-device") == nil)
        }

        @Test func theKeyIsAttestedOverTheChallengesHashKeptInTheKeychainAndReusedForAssertions() async throws {
            try await self.session().registerDevice()
            let keyID = try #require(StandInAppAttest.keys.first)
            #expect(StandInAppAttest.calls == [.generateKey, .attestKey(keyID, try #require(Self.data(hex: Self.attestationHash)))])
            #expect(try KeychainStore(service: "com.example.attest").load()?.appAttestKeyID == keyID)
            #expect(
                try self.server.appAttest(sentTo: "/api/v1/auth/register-device")
                    == [
                        "key_id": keyID, "attestation_object": Data("attestation:\(keyID)".utf8).base64EncodedString(),
                        "challenge": Self.challenges[0],
                    ])

            // The app is launched again: a new session reads the key ID back from the Keychain and asserts with it.
            _ = try await self.session().continueAsGuest()
            #expect(StandInAppAttest.calls.filter { $0 == .generateKey }.count == 1)
            #expect(StandInAppAttest.calls.last == .generateAssertion(keyID, try #require(Self.data(hex: Self.guestAssertionHash))))
            let guest = try #require(self.server.requests(to: "/api/v1/auth/guest").last)
            #expect(guest.header(LatchkeyHeader.appAttestAssertion) == Data("assertion:\(keyID)".utf8).base64EncodedString())
            #expect(guest.header(LatchkeyHeader.appAttestChallenge) == Self.challenges[1])
        }

        @Test func aKeyLostWithAReinstallIsReplacedAndAttestedOnce() async throws {
            self.server.attests = false  // the first attestation is not marked: the key is attested again next time
            try await self.session().registerDevice()
            let first = try #require(StandInAppAttest.keys.first)
            StandInAppAttest.loseKeys()
            self.server.attests = true

            try await self.session().registerDevice()

            let second = try #require(StandInAppAttest.keys.first)
            #expect(second != first)
            #expect(
                StandInAppAttest.calls.suffix(3) == [
                    .attestKey(first, Self.hashOfChallenge(1)), .generateKey, .attestKey(second, Self.hashOfChallenge(1)),
                ])
            #expect(try KeychainStore(service: "com.example.attest").load()?.appAttestKeyID == second)
            #expect(try self.server.appAttest(sentTo: "/api/v1/auth/register-device")?["key_id"] == second)
        }

        @Test func invalidInputAlsoGetsANewKeyAndASecondRefusalNeverLoops() async throws {
            StandInAppAttest.failNext(.invalidInput)
            try await self.session(keychainService: "com.example.first").registerDevice()
            #expect(StandInAppAttest.calls.filter { $0 == .generateKey }.count == 2)
            #expect(try self.server.appAttest(sentTo: "/api/v1/auth/register-device")?["key_id"] != nil)

            StandInAppAttest.reset()
            StandInAppAttest.failNext(.invalidKey, .invalidKey)
            try await self.session(keychainService: "com.example.second").registerDevice()
            let calls = StandInAppAttest.calls
            #expect(calls.count == 4)  // generateKey, attestKey (refused), generateKey, attestKey (refused): then unattested
            #expect(try self.server.appAttest(sentTo: "/api/v1/auth/register-device") == nil)
        }

        static func hashOfChallenge(_ index: Int) -> Data {
            index == 0 ? Self.data(hex: Self.attestationHash)! : Self.data(hex: "02d449a31fbb267c8f352e9968a79e3e5fc95c1bbeaa502fd6454ebde5a4bedc")!
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
}

/// A server's App Attest routes, stubbed: the two challenges in turn, and tokens that say `att: true` for a request that
/// carried an attestation or an assertion (unless `attests` is off). Records what was sent.
final class AttestingServer: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [TransportRequest] = []
    private var handedOut = 0
    private var marksAttested = true

    var attests: Bool {
        get { self.lock.withLock { self.marksAttested } }
        set { self.lock.withLock { self.marksAttested = newValue } }
    }

    var paths: [String] { self.lock.withLock { self.sent.map(\.url.path) } }
    func requests(to path: String) -> [TransportRequest] { self.lock.withLock { self.sent.filter { $0.url.path == path } } }

    /// The `app_attest` object of the last request to `path`.
    func appAttest(sentTo path: String) throws -> [String: String]? {
        guard let body = self.requests(to: path).last?.body, let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            return nil
        }
        return object["app_attest"] as? [String: String]
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (attests, challenge) = self.lock.withLock { () -> (Bool, String) in
            self.sent.append(request)
            defer { if request.url.path == "/api/v1/app-attest/challenge" { self.handedOut += 1 } }
            return (self.marksAttested, SystemKeychainTests.AppAttestDeviceCheckTests.challenges[self.handedOut % 2])
        }
        let proved =
            request.header(LatchkeyHeader.appAttestAssertion) != nil
            || request.body.map { String(decoding: $0, as: UTF8.self) }?.contains("key_id") == true
        let token = "e30." + Base64URL.encode(Data((attests && proved ? #"{"sub":"u","att":true}"# : #"{"sub":"u"}"#).utf8)) + ".c2ln"
        switch request.url.path {
        case "/api/v1/app-attest/challenge":
            return Self.json(200, AppAttestChallengeResponse(challenge: challenge))
        case "/api/v1/auth/register-device":
            return Self.json(
                201,
                TokenPairResponse(
                    accessToken: token, expiresIn: 900, refreshToken: "refresh-1", refreshTokenExpiresIn: 86400, userID: "u", sessionID: "s",
                    deviceSecret: nil))
        case "/api/v1/auth/guest":
            return Self.json(200, GuestSessionResponse(accessToken: token, expiresIn: 3600, limitations: GuestLimitations()))
        default:
            return TransportResponse(status: 404)
        }
    }

    static func json(_ status: Int, _ value: some Encodable) -> TransportResponse {
        TransportResponse(status: status, headers: ["Content-Type": "application/json"], body: try! JSONEncoder().encode(value))
    }
}
