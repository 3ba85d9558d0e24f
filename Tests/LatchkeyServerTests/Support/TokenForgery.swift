import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

// Tools to take Latchkey tokens apart and to forge the tokens an attacker would try.
// They use Foundation only (the test target has no crypto dependency), so HMAC-SHA256 is written out
// here and checked against RFC 4231 in `TokenForgeryTests`.

/// Base64url without padding (RFC 7515 §2).
enum Base64URL {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func encode(_ text: String) -> String { self.encode(Data(text.utf8)) }

    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// The JOSE header of a compact JWS.
struct JWTHeader: Codable, Equatable {
    var alg: String
    var typ: String?
    var kid: String?
}

/// A compact JWS (`header.payload.signature`), segment by segment.
struct CompactJWT: CustomStringConvertible {
    var header: String
    var payload: String
    var signature: String

    init(header: String, payload: String, signature: String) {
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw TestFailure("not a compact JWS: \(parts.count) segments") }
        self.init(header: parts[0], payload: parts[1], signature: parts[2])
    }

    var description: String { "\(self.header).\(self.payload).\(self.signature)" }
    var signingInput: String { "\(self.header).\(self.payload)" }

    func decodedHeader() throws -> JWTHeader {
        guard let data = Base64URL.decode(self.header) else { throw TestFailure("header is not base64url") }
        return try JSONDecoder().decode(JWTHeader.self, from: data)
    }

    func claims() throws -> AccessTokenClaims {
        guard let data = Base64URL.decode(self.payload) else { throw TestFailure("payload is not base64url") }
        return try JSONDecoder().decode(AccessTokenClaims.self, from: data)
    }
}

/// The forgeries: each returns a token an honest Latchkey server must refuse.
enum Forge {
    /// The header of `token`.
    static func header(of token: String) throws -> JWTHeader { try CompactJWT(token).decodedHeader() }

    /// The claims of `token`, read without checking anything.
    static func claims(of token: String) throws -> AccessTokenClaims { try CompactJWT(token).claims() }

    /// `token` with one character of its payload segment changed (the signature left as it was).
    static func flippingPayloadCharacter(_ token: String) throws -> String {
        var jwt = try CompactJWT(token)
        var characters = Array(jwt.payload)
        let middle = characters.count / 2
        characters[middle] = characters[middle] == "A" ? "B" : "A"
        jwt.payload = String(characters)
        return jwt.description
    }

    /// `token` with its claims rewritten by `change` and re-encoded, the original signature kept.
    static func rewritingClaims(_ token: String, _ change: (inout AccessTokenClaims) -> Void) throws -> String {
        var jwt = try CompactJWT(token)
        var claims = try jwt.claims()
        change(&claims)
        jwt.payload = Base64URL.encode(try JSONEncoder().encode(claims))
        return jwt.description
    }

    /// `token` with one bit of its signature flipped (in the decoded bytes, so base64 padding bits cannot hide it).
    static func flippingSignatureBit(_ token: String) throws -> String {
        var jwt = try CompactJWT(token)
        guard var bytes = Base64URL.decode(jwt.signature), !bytes.isEmpty else { throw TestFailure("empty signature") }
        bytes[bytes.count / 2] ^= 0x01
        jwt.signature = Base64URL.encode(bytes)
        return jwt.description
    }

    /// `token`'s payload under `{"alg":"none","typ":"JWT"}` with an empty signature.
    static func algNone(_ token: String) throws -> String {
        let jwt = try CompactJWT(token)
        return CompactJWT(header: Base64URL.encode(#"{"alg":"none","typ":"JWT"}"#), payload: jwt.payload, signature: "").description
    }

    /// `token`'s payload under an HS256 header (keeping its `kid`), correctly MAC'd with `secret`:
    /// the algorithm-confusion attack, where a verifier uses the public key as an HMAC secret.
    static func hs256(_ token: String, secret: Data) throws -> String {
        let jwt = try CompactJWT(token)
        let kid = try jwt.decodedHeader().kid
        let header = Base64URL.encode(try JSONEncoder().encode(JWTHeader(alg: "HS256", typ: "JWT", kid: kid)))
        let input = "\(header).\(jwt.payload)"
        let mac = HMACSHA256.authenticationCode(for: Data(input.utf8), key: secret)
        return CompactJWT(header: header, payload: jwt.payload, signature: Base64URL.encode(mac)).description
    }
}

/// The public forms of an EC P-256 key an attacker could try as an HMAC secret.
struct PublicKeyForms {
    let jwk: JSONWebKey

    /// `04 ‖ x ‖ y`.
    var x963: Data {
        get throws {
            guard let x = Base64URL.decode(self.jwk.x), let y = Base64URL.decode(self.jwk.y) else { throw TestFailure("bad JWK coordinates") }
            return Data([0x04]) + x + y
        }
    }

    /// The SubjectPublicKeyInfo DER of the key.
    var der: Data {
        get throws {
            // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING { 04 ‖ x ‖ y } }
            let prefix: [UInt8] = [
                0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
                0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
            ]
            return Data(prefix) + (try self.x963)
        }
    }

    /// The PEM of the key, as `pemRepresentation` writes it (no trailing newline).
    var pem: String {
        get throws {
            let base64 = try self.der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN PUBLIC KEY-----\n\(base64)\n-----END PUBLIC KEY-----"
        }
    }

    /// The JWK as served in the JWKS.
    var jwkJSON: Data {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(self.jwk)
        }
    }
}

/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), just enough to forge HS256 tokens.
enum HMACSHA256 {
    static func authenticationCode(for message: Data, key: Data) -> Data {
        var key = key.count > 64 ? sha256(key) : key
        key.append(contentsOf: [UInt8](repeating: 0, count: 64 - key.count))
        let inner = Data(key.map { $0 ^ 0x36 }) + message
        let outer = Data(key.map { $0 ^ 0x5c }) + sha256(inner)
        return sha256(outer)
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    static func sha256(_ message: Data) -> Data {
        var h: [UInt32] = [0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19]
        var bytes = [UInt8](message)
        let bitLength = UInt64(bytes.count) * 8
        bytes.append(0x80)
        while bytes.count % 64 != 56 { bytes.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: bytes.count, by: 64) {
            for i in 0..<16 {
                let j = chunk + i * 4
                w[i] = UInt32(bytes[j]) << 24 | UInt32(bytes[j + 1]) << 16 | UInt32(bytes[j + 2]) << 8 | UInt32(bytes[j + 3])
            }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<64 {
                let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
                let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ maj
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            for (i, value) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ value }
        }
        return Data(h.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } })
    }
}

extension Data {
    var hex: String { self.map { String(format: "%02x", $0) }.joined() }
}

// MARK: - HTTP helpers shared by the token suites

extension TestClientProtocol {
    /// Registers `deviceID` again with its secret: a second session of the same user.
    func registerAgain(_ first: TokenPairResponse) async throws -> TokenPairResponse {
        let response = try await self.send(
            .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: first.userID, deviceSecret: first.deviceSecret))
        guard response.status == .ok else { throw TestFailure("re-registering answered \(response.status)") }
        return try response.decode(TokenPairResponse.self)
    }

    func refresh(_ refreshToken: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: refreshToken))
    }

    func validate(_ token: String) async throws -> TestResponse {
        try await self.send(.get, "/api/v1/validate-token", bearer: token)
    }

    func me(_ token: String) async throws -> TestResponse {
        try await self.send(.get, "/api/v1/users/me", bearer: token)
    }

    /// The Prometheus text of `GET /metrics`.
    func metricsText() async throws -> String {
        let response = try await self.send(.get, "/metrics")
        guard response.status == .ok else { throw TestFailure("/metrics answered \(response.status)") }
        return response.text
    }

    /// The JWKS of `GET /.well-known/jwks.json`.
    func jwks() async throws -> JSONWebKeySet {
        let response = try await self.send(.get, "/.well-known/jwks.json")
        guard response.status == .ok else { throw TestFailure("jwks.json answered \(response.status)") }
        return try response.decode(JSONWebKeySet.self)
    }
}

/// The sum of the samples of `name` (with any labels containing every one of `labels`), or nil when absent.
func metricValue(_ name: String, labels: [String] = [], in exposition: String) -> Double? {
    let samples = exposition.split(separator: "\n").filter { line in
        guard !line.hasPrefix("#") else { return false }
        let metric = line.prefix { $0 != " " && $0 != "{" }
        return metric == name && labels.allSatisfy { line.contains($0) }
    }
    guard !samples.isEmpty else { return nil }
    return samples.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
}

/// Expects `response` to be a 401 carrying `WWW-Authenticate: Bearer …`.
func expectUnauthorized(_ response: TestResponse, code: ErrorCode = .invalidToken, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == .unauthorized, sourceLocation: sourceLocation)
    #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, sourceLocation: sourceLocation)
    #expect(response.envelope?.error.code == code, sourceLocation: sourceLocation)
}

/// Expects `token` to be refused by `validate-token` (401 `{valid: false}` with `invalid_token`, RFC 6750 header)
/// and by `users/me` (401 envelope).
func expectRefused(_ token: String, by client: some TestClientProtocol, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let validation = try await client.validate(token)
    #expect(validation.status == .unauthorized, sourceLocation: sourceLocation)
    #expect((try? validation.decode(InvalidTokenResponse.self))?.valid == false, sourceLocation: sourceLocation)
    #expect((try? validation.decode(InvalidTokenResponse.self))?.error.code == .invalidToken, sourceLocation: sourceLocation)
    #expect(validation.headers[.wwwAuthenticate]?.contains(#"Bearer"#) == true, sourceLocation: sourceLocation)
    #expect(validation.headers[.wwwAuthenticate]?.contains(#"error="invalid_token""#) == true, sourceLocation: sourceLocation)
    let profile = try await client.me(token)
    expectUnauthorized(profile, sourceLocation: sourceLocation)
}

/// Expects `token` to be accepted by `validate-token` and `users/me`.
func expectAccepted(_ token: String, by client: some TestClientProtocol, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    #expect(try await client.validate(token).status == .ok, sourceLocation: sourceLocation)
    #expect(try await client.me(token).status == .ok, sourceLocation: sourceLocation)
}

/// The forging helpers are only as good as their crypto: a wrong HMAC would make the
/// algorithm-confusion tests pass against a vulnerable server.
@Suite struct TokenForgeryTests {
    @Test func sha256MatchesFIPS180Examples() {
        #expect(HMACSHA256.sha256(Data("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(HMACSHA256.sha256(Data()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            HMACSHA256.sha256(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func hmacMatchesRFC4231() {
        #expect(
            HMACSHA256.authenticationCode(for: Data("what do ya want for nothing?".utf8), key: Data("Jefe".utf8)).hex
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            HMACSHA256.authenticationCode(
                for: Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8), key: Data(repeating: 0xaa, count: 131)
            ).hex == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
