import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

// Tools to take Latchkey tokens apart and to forge the tokens an attacker would try (HMACs from swift-crypto).

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
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: secret)))
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

    /// The Prometheus text of `GET /metrics` (with the test servers' `metrics.token`).
    func metricsText() async throws -> String {
        let response = try await self.send(.get, "/metrics", bearer: TestServer.metricsToken)
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
