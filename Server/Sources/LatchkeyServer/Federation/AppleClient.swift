import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1

/// Apple's `/auth/token` and `/auth/revoke`, authenticated with a client secret: an ES256 JWT signed
/// with the developer's Sign in with Apple key (`.p8`), as Apple's documentation describes.
struct AppleClient: Sendable {
    let configuration: AppleConfiguration
    let http: HTTPClient
    let clock: any WallClock

    /// What `/auth/token` answered to an authorization code.
    struct TokenResponse: Decodable, Sendable {
        let refreshToken: String?
        let idToken: String?
        enum CodingKeys: String, CodingKey {
            case refreshToken = "refresh_token"
            case idToken = "id_token"
        }
    }

    private struct ClientSecretClaims: JWTPayload {
        let iss: String
        let iat: Int64
        let exp: Int64
        let aud: String
        let sub: String
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The client secret for `clientID`, valid five minutes.
    func clientSecret(clientID: String) async throws -> String {
        guard let teamID = self.configuration.teamID, let keyID = self.configuration.keyID, let pem = self.configuration.privateKeyPEM else {
            throw UpstreamError.refused("no Sign in with Apple key configured (apple.team-id, apple.key-id, apple.private-key)")
        }
        let key = try ES256PrivateKey(pem: pem)
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        let now = Int64(self.clock.now().timeIntervalSince1970)
        return try await keys.sign(
            ClientSecretClaims(iss: teamID, iat: now, exp: now + 300, aud: AppleConfiguration.issuer, sub: clientID),
            kid: JWKIdentifier(string: keyID))
    }

    /// Exchanges an authorization code of the app `clientID`.
    func exchange(code: String, clientID: String) async throws -> TokenResponse {
        let body = try await self.post(
            self.configuration.tokenURL,
            form: [
                "client_id": clientID, "client_secret": try await self.clientSecret(clientID: clientID), "code": code,
                "grant_type": "authorization_code",
            ])
        guard let response = try? JSONDecoder().decode(TokenResponse.self, from: body) else { throw UpstreamError.malformed }
        return response
    }

    /// Revokes a refresh token (Apple answers 200 for tokens it no longer knows, too).
    func revoke(refreshToken: String, clientID: String) async throws {
        _ = try await self.post(
            self.configuration.revokeURL,
            form: [
                "client_id": clientID, "client_secret": try await self.clientSecret(clientID: clientID), "token": refreshToken,
                "token_type_hint": "refresh_token",
            ])
    }

    private func post(_ url: String, form: [String: String]) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.formEncoded(form)))
        let response = try await self.http.execute(request, timeout: .seconds(10))
        let body = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        guard response.status == .ok else {
            // Apple's error answers are {"error": "invalid_grant"} and the like: safe to name.
            let error = (try? JSONDecoder().decode([String: String].self, from: body))?["error"]
            throw error.map { UpstreamError.refused($0) } ?? UpstreamError.status(Int(response.status.code))
        }
        return body
    }

    static func formEncoded(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
