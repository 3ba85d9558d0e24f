import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// A client's DPoP key (RFC 9449) and the proofs it makes, as an app holding a device key would.
struct DPoPKey: Sendable {
    let privateKey = P256.Signing.PrivateKey()

    var jwk: [String: String] {
        let x963 = self.privateKey.publicKey.x963Representation
        return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(x963[1..<33]), "y": Base64URL.encode(x963[33..<65])]
    }

    /// A proof for `method` `path` on the test issuer, with `nonce` and a fresh `jti` unless given, naming `accessToken`
    /// in `ath` when given.
    func proof(
        _ method: String, _ path: String, nonce: String?, jti: String = UUID().uuidString, iat: Date, origin: String = TestServer.issuer,
        type: String = "dpop+jwt", accessToken: String? = nil
    ) throws -> String {
        let header: [String: Any] = ["typ": type, "alg": "ES256", "jwk": self.jwk]
        var claims: [String: Any] = ["jti": jti, "htm": method, "htu": origin + path, "iat": Int(iat.timeIntervalSince1970)]
        if let nonce { claims["nonce"] = nonce }
        if let accessToken { claims["ath"] = Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8)))) }
        let input =
            Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signature = try self.privateKey.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }
}

extension TestClientProtocol {
    /// The nonce the server hands out now (any answer of a proving route carries it).
    func dpopNonce() async throws -> String {
        let response = try await self.send(.post, "/api/v1/auth/refresh", json: "{}")
        guard let nonce = response.headers[HTTPField.Name("DPoP-Nonce")!] else { throw TestFailure("no DPoP-Nonce header") }
        return nonce
    }

    /// `POST path` with `body` and the DPoP proof `proof`.
    func sendProving(_ path: String, json body: String, proof: String?, bearer: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let proof { headers[HTTPField.Name("DPoP")!] = proof }
        return try await self.send(.post, path, bearer: bearer, json: body, headers: headers)
    }

    /// Registers `deviceID` with a proof made by `key`.
    func registerDevice(_ deviceID: UUID = UUID(), key: DPoPKey, at now: Date) async throws -> TestResponse {
        let nonce = try await self.dpopNonce()
        let body = String(decoding: try JSONEncoder().encode(RegisterDeviceRequest(deviceID: deviceID.uuidString)), as: UTF8.self)
        return try await self.sendProving(
            "/api/v1/auth/register-device", json: body, proof: try key.proof("POST", "/api/v1/auth/register-device", nonce: nonce, iat: now))
    }

    /// Refreshes with a proof made by `key` (none when `key` is nil).
    func refresh(_ refreshToken: String, key: DPoPKey?, at now: Date) async throws -> TestResponse {
        let nonce = try await self.dpopNonce()
        let body = String(decoding: try JSONEncoder().encode(RefreshRequest(refreshToken: refreshToken)), as: UTF8.self)
        return try await self.sendProving(
            "/api/v1/auth/refresh", json: body, proof: try key?.proof("POST", "/api/v1/auth/refresh", nonce: nonce, iat: now))
    }
}
