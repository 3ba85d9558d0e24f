import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Logging
import NIOCore
import SQLKit
import Testing

/// App Attest (issue 34) as an app and a proxy see it: a live server whose settings are written by their names in the
/// issue (a JSON configuration file read as `latchkey` reads one, so a misnamed setting is refused), its clock at the
/// stand-in CA's "now", the stand-in CA's root in `app-attest.roots`.
struct AppAttestSpec: Sendable {
    typealias Authority = TestAttestationAuthority
    typealias Device = TestAttestationAuthority.Device

    static let appID = TestAttestationAuthority.appID
    static let otherAppID = "OTHER12345.com.example.other"
    static let guestPath = "/api/v1/auth/guest"
    static let edit = "/api/edit"

    let client: any TestClientProtocol
    let server: TestServer
    let authority: Authority

    // MARK: - The server

    /// Settings every spec server has besides the test's own: every other abuse limit off, the App Attest limits off,
    /// 127.0.0.1 a trusted proxy (so `X-Forwarded-For` names the client), and one metered forward-auth rule.
    static let baseSettings: [String: any Sendable] = [
        "limits.register-device.limit": 0, "limits.register-user.limit": 0, "limits.guest.limit": 0, "limits.access-code-exchange.limit": 0,
        "limits.refresh.limit": 0, "limits.refresh-failures.limit": 0, "limits.sign-in.limit": 0, "limits.assets.limit": 0,
        "limits.events.limit": 0, "limits.guest-per-network": 0, "limits.app-attest.limit": 0, "limits.app-attest-challenge.limit": 0,
        "limits.trusted-proxies": ["127.0.0.1"], "authorize.routes": ["POST \(Self.edit) bearer actions"],
        "app-attest.app-ids": [Self.otherAppID, Self.appID],
    ]

    /// The configuration `settings` (dotted keys) make, read from a JSON file the way `latchkey` reads one.
    static func configuration(_ settings: [String: any Sendable]) async throws -> LatchkeyConfiguration {
        var root: [String: Any] = [:]
        for (key, value) in settings { Self.insert(value, at: key.split(separator: ".").map(String.init)[...], into: &root) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-app-attest-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: root).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path, environment: [:])
    }

    private static func insert(_ value: Any, at path: ArraySlice<String>, into object: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[first] = value
        } else {
            var inner = object[first] as? [String: Any] ?? [:]
            Self.insert(value, at: path.dropFirst(), into: &inner)
            object[first] = inner
        }
    }

    /// The PEM of a certificate, as `app-attest.roots` takes it.
    static func pem(_ der: [UInt8]) -> String {
        let text = Data(der).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
    }

    /// The settings of a spec server: the base, the stand-in CA's root, `policy`, then `settings` (which win).
    static func settings(policy: String?, authority: Authority, _ settings: [String: any Sendable]) throws -> [String: any Sendable] {
        var all = Self.baseSettings
        if let policy { all["app-attest.policy"] = policy }
        all["app-attest.roots"] = [Self.pem(try Authority.der(authority.root))]
        all.merge(settings) { $1 }
        return all
    }

    /// A live server over a fresh database with `settings`, the clock at ``TestAttestationAuthority/now``.
    static func make(
        policy: String? = "guests", _ settings: [String: any Sendable] = [:], authority: Authority? = nil, database: String? = nil,
        clock: ManualClock = ManualClock(start: Authority.now), logger: Logger? = nil
    ) async throws -> (TestServer, Authority) {
        let authority = try authority ?? Authority()
        let configuration = try await Self.configuration(try Self.settings(policy: policy, authority: authority, settings))
        let server = try await TestServer.make(clock: clock, database: database, logger: logger) { Self.adopt(configuration, into: &$0) }
        return (server, authority)
    }

    /// Runs `body` against a live spec server (see ``make(policy:_:authority:database:clock:logger:)``).
    static func with<T: Sendable>(
        policy: String? = "guests", _ settings: [String: any Sendable] = [:], authority: Authority? = nil, logger: Logger? = nil,
        _ body: @Sendable (AppAttestSpec) async throws -> T
    ) async throws -> T {
        let (server, authority) = try await Self.make(policy: policy, settings, authority: authority, logger: logger)
        return try await server.test(.live) { client in try await body(AppAttestSpec(client: client, server: server, authority: authority)) }
    }

    /// `loaded`, keeping what makes `test` a test server (its database, master key, issuer, port, quiet background loops).
    static func adopt(_ loaded: LatchkeyConfiguration, into test: inout LatchkeyConfiguration) {
        let base = test
        test = loaded
        test.database = base.database
        test.databaseMaxConnections = base.databaseMaxConnections
        test.databaseTimeout = base.databaseTimeout
        test.publicURL = base.publicURL
        test.masterKey = base.masterKey
        test.masterKeyFile = nil
        test.port = base.port
        test.metricsToken = base.metricsToken
        test.pruneInterval = base.pruneInterval
        test.email.pollInterval = base.email.pollInterval
    }

    // MARK: - Bytes as the app sends them

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// base64url without padding, which the server accepts as well.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Self.base64(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// The 32 bytes a challenge's base64 stands for.
    static func bytes(ofChallenge challenge: String) throws -> [UInt8] {
        try #require(Data(base64Encoded: challenge).map { Array($0) }, "the challenge \(challenge) is not standard base64")
    }

    /// The assertion clientDataHash: SHA256("POST" ‖ path ‖ SHA256(body bytes) ‖ the 32 challenge bytes), raw.
    static func assertionClientDataHash(method: String = "POST", path: String = Self.guestPath, body: [UInt8], challenge: [UInt8]) -> [UInt8] {
        Self.sha256(Array(method.utf8) + Array(path.utf8) + Self.sha256(body) + challenge)
    }

    // MARK: - Requests

    static func forwarded(_ address: String?) -> HTTPFields {
        guard let address else { return [:] }
        return [HTTPField.Name("X-Forwarded-For")!: address]
    }

    /// `POST /api/v1/app-attest/challenge`.
    func requestChallenge(from address: String? = nil) async throws -> TestResponse {
        try await self.client.send(.post, "/api/v1/app-attest/challenge", headers: Self.forwarded(address))
    }

    /// A fresh challenge (the endpoint must answer 200).
    func challenge(from address: String? = nil) async throws -> String {
        let response = try await self.requestChallenge(from: address)
        guard response.status == .ok else { throw TestFailure("the challenge endpoint answered \(response.status): \(response.text)") }
        return try response.decode(AppAttestChallengeResponse.self).challenge
    }

    /// An attestation of `device` over a fresh challenge (clientDataHash = SHA256 of the challenge's 32 bytes), as an app
    /// sends it; `parts` changes one detail, `clientDataHash` replaces the hash the app computes.
    func evidence(
        _ device: Device, _ parts: Authority.Parts = .init(), challenge: String? = nil, clientDataHash: (@Sendable (String) throws -> [UInt8])? = nil,
        from address: String? = nil
    ) async throws -> AppAttestEvidence {
        let challenge = if let challenge { challenge } else { try await self.challenge(from: address) }
        let hash = try clientDataHash?(challenge) ?? Self.sha256(try Self.bytes(ofChallenge: challenge))
        let object = try self.authority.attestation(device, clientDataHash: hash, parts)
        return AppAttestEvidence(keyID: Self.base64(device.keyID), attestationObject: Self.base64(object), challenge: challenge)
    }

    /// `POST /api/v1/auth/register-device` for `deviceID` with `evidence`.
    func register(_ deviceID: UUID, _ evidence: AppAttestEvidence?, from address: String? = nil) async throws -> TestResponse {
        let request = RegisterDeviceRequest(deviceID: deviceID.uuidString, appAttest: evidence)
        let body = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        return try await self.client.send(.post, "/api/v1/auth/register-device", json: body, headers: Self.forwarded(address))
    }

    /// `POST /api/v1/auth/register-device` with a raw JSON body.
    func register(json: String) async throws -> TestResponse {
        try await self.client.send(.post, "/api/v1/auth/register-device", json: json)
    }

    /// `POST /api/v1/auth/guest` for `deviceID`, with `body` exactly as given and the assertion headers when given.
    func guest(
        _ deviceID: UUID, json body: String? = nil, assertion: String? = nil, challenge: String? = nil, from address: String? = nil,
        uri: String = Self.guestPath
    ) async throws -> TestResponse {
        var headers = Self.forwarded(address)
        headers[HTTPField.Name("X-Device-ID")!] = deviceID.uuidString
        if let assertion { headers[HTTPField.Name(LatchkeyHeader.appAttestAssertion)!] = assertion }
        if let challenge { headers[HTTPField.Name(LatchkeyHeader.appAttestChallenge)!] = challenge }
        return try await self.client.send(.post, uri, json: body, headers: headers)
    }

    /// `POST /api/v1/auth/guest` carrying `{"app_attest": evidence}`.
    func guest(_ deviceID: UUID, evidence: AppAttestEvidence, from address: String? = nil) async throws -> TestResponse {
        let body = String(decoding: try JSONEncoder().encode(GuestSessionRequest(appAttest: evidence)), as: UTF8.self)
        return try await self.guest(deviceID, json: body, from: address)
    }

    /// An assertion by `device` for a guest request with `body`, over a fresh challenge: (header value, challenge).
    func assertion(
        _ device: Device, counter: UInt32, body: String? = nil, path: String = Self.guestPath, appID: String = Self.appID, flags: UInt8 = 0x40,
        trailing: [UInt8] = [], signer: P256.Signing.PrivateKey? = nil, prehashed: Bool = false
    ) async throws -> (assertion: String, challenge: String) {
        let challenge = try await self.challenge()
        let hash = Self.assertionClientDataHash(path: path, body: Array((body ?? "").utf8), challenge: try Self.bytes(ofChallenge: challenge))
        let assertion = try Authority.assertion(
            device, clientDataHash: hash, counter: counter, appID: appID, flags: flags, trailing: trailing, signer: signer, prehashed: prehashed)
        return (Self.base64(assertion), challenge)
    }

    /// A guest request of an attested device proved with an assertion at `counter`.
    func provenGuest(_ deviceID: UUID, _ device: Device, counter: UInt32, body: String? = nil) async throws -> TestResponse {
        let proof = try await self.assertion(device, counter: counter, body: body)
        return try await self.guest(deviceID, json: body, assertion: proof.assertion, challenge: proof.challenge)
    }

    /// Makes `deviceID` an attested device through a guest request carrying a valid attestation of `device`.
    @discardableResult
    func attestByGuest(_ deviceID: UUID, _ device: Device) async throws -> GuestSessionResponse {
        let response = try await self.guest(deviceID, evidence: try await self.evidence(device))
        guard response.status == .created else { throw TestFailure("an attested guest request answered \(response.status): \(response.text)") }
        return try response.decode(GuestSessionResponse.self)
    }

    /// Registers `deviceID` with a valid attestation of `device`.
    func attestByRegistering(_ deviceID: UUID, _ device: Device) async throws -> TokenPairResponse {
        let response = try await self.register(deviceID, try await self.evidence(device))
        guard response.status == .created else { throw TestFailure("an attested register-device answered \(response.status): \(response.text)") }
        return try response.decode(TokenPairResponse.self)
    }

    /// `GET /api/v1/authorize` for the metered rule, as the proxy asks it.
    func authorize(bearer: String, device: UUID?) async throws -> TestResponse {
        var headers: HTTPFields = [HTTPField.Name("X-Original-Method")!: "POST", HTTPField.Name("X-Original-URI")!: Self.edit]
        if let device { headers[HTTPField.Name("X-Device-ID")!] = device.uuidString }
        return try await self.client.send(.get, "/api/v1/authorize", bearer: bearer, headers: headers)
    }

    func me(_ accessToken: String) async throws -> UserProfile {
        try await self.client.send(.get, "/api/v1/users/me", bearer: accessToken).decode(UserProfile.self)
    }

    func refresh(_ refreshToken: String) async throws -> TestResponse {
        try await self.client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: refreshToken))
    }

    // MARK: - What the database holds

    /// Rows of `table`.
    func count(_ table: String) async throws -> Int {
        try await self.server.services.database.read { sql in
            try await sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    /// The rows a sign-in or an attestation writes, by table: a refused request leaves them as they were.
    func rows() async throws -> [String: Int] {
        var rows: [String: Int] = [:]
        for table in ["users", "devices", "sessions", "app_attest_keys"] { rows[table] = try await self.count(table) }
        return rows
    }

    static func header(_ response: TestResponse, _ name: String) -> String? { response.headers[HTTPField.Name(name)!] }

    /// The claims of an access token, as a JSON object (so an absent `att` is told apart from `false`).
    static func payload(_ accessToken: String) throws -> [String: Any] { try Backend.payload(of: accessToken) }

    static func attClaim(_ accessToken: String) throws -> Bool? {
        let payload = try Self.payload(accessToken)
        guard let value = payload["att"] else { return nil }
        return try #require(value as? Bool, "att is \(value), not a boolean")
    }
}
