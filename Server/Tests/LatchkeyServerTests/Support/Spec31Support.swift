import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import SQLKit
import Synchronization
import Testing
import _CryptoExtras

// Support for the issue-31 specification suites (Spec31*Tests), written from the issue's text: a Google-like issuer with
// its own RSA key and JWKS on a loopback socket (and Apple's JWKS beside it), servers configured through the settings'
// own names (`google.client-ids`, `google.jwks-url`…), and readers of what the tests compare.

/// A Google-like issuer on 127.0.0.1: `GET /oauth2/v3/certs` serves Google's JWKS (`google-1`), `GET /apple/keys` an
/// Apple JWKS (`apple-1`) for the Apple sign-ins the tests make beside Google's; tokens are minted in the test process.
final class Spec31Issuer: Sendable {
    static let appClientID = "1234-ios.apps.googleusercontent.com"
    static let webClientID = "1234-web.apps.googleusercontent.com"
    static let appleClientID = "com.example.app"
    static let googleKid = "google-1"
    static let appleKid = "apple-1"

    /// The issuer's signing key, and one nobody publishes (forgeries).
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let rogue = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    private let fetchCount = Mutex(0)
    var fetches: Int { self.fetchCount.withLock { $0 } }

    /// Runs `body` with the issuer's base URL (`http://127.0.0.1:<port>`) while it listens.
    func run<T: Sendable>(_ body: @escaping @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.get("/oauth2/v3/certs") { _, _ -> Response in
            self.fetchCount.withLock { $0 += 1 }
            return Self.json(Self.jwks(kid: Self.googleKid))
        }
        router.get("/apple/keys") { _, _ -> Response in Self.json(Self.jwks(kid: Self.appleKid)) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("the issuer has no port") }
            return try await body("http://127.0.0.1:\(port)")
        }
    }

    static func jwks(kid: String) -> String {
        let primitives = try! self.key.publicKey.getKeyPrimitives()
        let n = Base64URL.encode(primitives.modulus)
        let e = Base64URL.encode(primitives.publicExponent)
        return #"{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"\#(kid)","n":"\#(n)","e":"\#(e)"}]}"#
    }

    private static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=3600"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A compact JWS of `claims` under `header` (default RS256 with the Google kid), signed with `key`; `alg` other than
    /// RS256 makes the matching forgery (`none`: no signature; `HS256`: an HMAC keyed with the public key's PEM).
    static func token(
        _ claims: [String: Any], kid: String? = googleKid, alg: String = "RS256", key: _RSA.Signing.PrivateKey = key
    ) -> String {
        var header: [String: Any] = ["alg": alg, "typ": "JWT"]
        if let kid { header["kid"] = kid }
        let head = Base64URL.encode(try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let body = Base64URL.encode(try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = Data("\(head).\(body)".utf8)
        let signature: Data
        switch alg {
        case "none": signature = Data()
        case "HS256":
            let secret = SymmetricKey(data: Data(key.publicKey.pemRepresentation.utf8))
            signature = Data(HMAC<SHA256>.authenticationCode(for: input, using: secret))
        default: signature = try! key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation
        }
        return "\(head).\(body).\(Base64URL.encode(signature))"
    }

    /// Google ID-token claims for `now`: issued now, valid an hour, for the iOS client, with `nonce` when given.
    static func googleClaims(now: Date, subject: String, nonce: String?, _ extra: [String: Any] = [:]) -> [String: Any] {
        let time = Int(now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": appClientID, "azp": appClientID, "sub": subject, "iat": time, "exp": time + 3600,
        ]
        if let nonce { claims["nonce"] = nonce }
        return claims.merging(extra) { $1 }
    }

    /// An Apple identity token for `now` (Apple's nonce is the SHA-256 hex of the raw one).
    static func appleToken(now: Date, subject: String, rawNonce: String, _ extra: [String: Any] = [:]) -> String {
        let time = Int(now.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": appleClientID, "sub": subject, "iat": time, "exp": time + 600,
            "nonce": sha256Hex(rawNonce),
        ]
        return self.token(claims.merging(extra) { $1 }, kid: appleKid)
    }

    static func sha256Hex(_ text: String) -> String { SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }
}

enum Spec31 {
    /// A server whose Google settings are read through their names from a JSON config file (`google` object merged with
    /// `google`) and `environment`, with Apple pointed at the issuer too; the rest as ``TestServer/make`` sets it.
    static func server(
        issuer base: String, clock: ManualClock = ManualClock(), google: [String: Any] = [:], useJWKSFile: Bool = true,
        environment: [String: String] = [:], configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        var settings: [String: Any] = ["client-ids": [Spec31Issuer.appClientID, Spec31Issuer.webClientID]]
        if useJWKSFile { settings["jwks-url"] = "\(base)/oauth2/v3/certs" }
        settings.merge(google) { $1 }
        let loaded = try await self.configuration(google: settings, environment: environment)
        return try await TestServer.make(clock: clock) { configuration in
            var mine = loaded.runningAs(configuration)
            mine.apple.clientIDs = [Spec31Issuer.appleClientID]
            mine.apple.jwksURL = "\(base)/apple/keys"
            configuration = mine
            configure(&configuration)
        }
    }

    /// The configuration `latchkey` reads from a config file whose `google` object is `google`, and `environment`.
    static func configuration(google: [String: Any], environment: [String: String] = [:]) async throws -> LatchkeyConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spec31-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: ["google": google]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path, environment: environment)
    }

    /// Runs `body` with a live server of ``server(issuer:clock:google:useJWKSFile:environment:configure:)``.
    static func withGoogle(
        clock: ManualClock = ManualClock(), google: [String: Any] = [:],
        configure: @escaping @Sendable (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, TestServer, Spec31Issuer) async throws -> Void
    ) async throws {
        nonisolated(unsafe) let google = google
        let issuer = Spec31Issuer()
        try await issuer.run { base in
            let server = try await Self.server(issuer: base, clock: clock, google: google, configure: configure)
            try await server.test(.live) { client in try await body(client, server, issuer) }
        }
    }

    /// Runs `body` with a live server with Sign in with Apple pointed at the issuer (no Google settings).
    static func withApple(_ body: @escaping @Sendable (any TestClientProtocol, TestServer) async throws -> Void) async throws {
        let issuer = Spec31Issuer()
        try await issuer.run { base in
            let server = try await TestServer.make { configuration in
                configuration.apple.clientIDs = [Spec31Issuer.appleClientID]
                configuration.apple.jwksURL = "\(base)/apple/keys"
            }
            try await server.test(.live) { client in try await body(client, server) }
        }
    }

    /// `POST /api/v1/auth/google` with `{id_token, nonce?}`.
    static func google(
        _ client: some TestClientProtocol, token: String, nonce: String?, bearer: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        var body: [String: Any] = ["id_token": token]
        if let nonce { body["nonce"] = nonce }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        return try await client.send(.post, "/api/v1/auth/google", bearer: bearer, json: json, sourceLocation: sourceLocation)
    }

    /// A Google sign-in of `subject` with a fresh nonce, on the server's clock.
    static func googleSignIn(
        _ client: some TestClientProtocol, _ server: TestServer, subject: String, extra: [String: Any] = [:], bearer: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        let nonce = UUID().uuidString
        let token = Spec31Issuer.token(Spec31Issuer.googleClaims(now: server.clock.now(), subject: subject, nonce: nonce, extra))
        return try await self.google(client, token: token, nonce: nonce, bearer: bearer, sourceLocation: sourceLocation)
    }

    /// `POST /api/v1/auth/apple` for `subject` with a fresh nonce.
    static func appleSignIn(
        _ client: some TestClientProtocol, _ server: TestServer, subject: String, bearer: String? = nil
    ) async throws
        -> TestResponse
    {
        let nonce = UUID().uuidString
        let token = Spec31Issuer.appleToken(now: server.clock.now(), subject: subject, rawNonce: nonce)
        return try await client.send(
            .post, "/api/v1/auth/apple", bearer: bearer, body: AppleSignInRequest(identityToken: token, rawNonce: nonce, authorizationCode: nil))
    }

    static func expectInvalidToken(_ response: TestResponse, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unauthorized, "\(comment): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .invalidToken, "\(comment): \(response.text)", sourceLocation: sourceLocation)
    }

    static func expectStatus(
        _ response: TestResponse, _ status: HTTPResponse.Status, _ code: ErrorCode? = nil, _ comment: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(comment): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        if let code { #expect(response.envelope?.error.code == code, "\(comment): \(response.text)", sourceLocation: sourceLocation) }
    }

    /// The response body as a JSON object.
    static func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any], "\(response.text)")
    }

    /// How many users the database holds.
    static func userCount(_ server: TestServer) async throws -> Int {
        try await server.services.database.read { sql in
            try await sql.raw("SELECT COUNT(*) AS n FROM users").first().map { try $0.decode(column: "n", as: Int.self) } ?? -1
        }
    }

    /// Every row of `tables`, each rendered as text, for comparing the state before and after a refused action.
    static func snapshot(_ server: TestServer, tables: [String] = Self.userTables) async throws -> [String: [String]] {
        try await server.services.database.read { sql in
            var result: [String: [String]] = [:]
            for table in tables {
                let rows = try await sql.raw("SELECT * FROM \(unsafeRaw: table)").all()
                result[table] = rows.map { row in
                    row.allColumns.sorted().map { column in "\(column)=\(Self.text(row, column))" }.joined(separator: " ")
                }.sorted()
            }
            return result
        }
    }

    /// Tables a console action on users, keys, codes or mail would change.
    static let userTables = [
        "users", "devices", "identities", "sessions", "refresh_tokens", "access_codes", "signing_keys", "budgets", "email_accounts",
        "email_codes", "outbox", "mfa_factors", "passkeys", "admin_accounts",
    ]

    private static func text(_ row: any SQLRow, _ column: String) -> String {
        if (try? row.decodeNil(column: column)) == true { return "NULL" }
        if let value = try? row.decode(column: column, as: String.self) { return value }
        if let value = try? row.decode(column: column, as: Int.self) { return String(value) }
        if let value = try? row.decode(column: column, as: Double.self) { return String(value) }
        if let value = try? row.decode(column: column, as: Data.self) { return value.base64EncodedString() }
        return "?"
    }

    /// Waits (in real time, up to 10 s, moving the server's clock a second each 100 ms for its revocation poll) until
    /// `token` is refused, as another process's revocation reaches this server through the feed.
    static func untilRefused(_ token: String, by client: some TestClientProtocol, _ server: TestServer) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await client.me(token).status == .ok, ContinuousClock.now < deadline {
            server.clock.advance(by: 1)
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// `date` as `YYYY-MM-DD` in UTC.
    static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }
}
