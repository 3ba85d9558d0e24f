import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// DPoP proofs (RFC 9449): a JWT signed by the device key for one request — its method and URL, the time, a unique
/// `jti`, the server's nonce and, for a request that carries an access token, that token's hash (`ath`) — so the request
/// proves it comes from this device and cannot be replayed, nor its proof moved to another token.
enum DPoPProof {
    static let header = "DPoP"
    static let nonceHeader = "DPoP-Nonce"

    /// A proof for `method` `url` (its query and fragment are not part of it), made at `now`, for a request carrying
    /// `accessToken` when there is one.
    static func make(key: DeviceKey, method: String, url: URL, nonce: String?, accessToken: String? = nil, now: Date) throws -> String {
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": try key.publicJWK()]
        var claims: [String: Any] = [
            "jti": UUID().uuidString, "htm": method.uppercased(), "htu": Self.target(of: url), "iat": Int(now.timeIntervalSince1970),
        ]
        if let nonce { claims["nonce"] = nonce }
        if let accessToken { claims["ath"] = Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8)))) }
        let input =
            Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes]))
        return input + "." + Base64URL.encode(try key.sign(Data(input.utf8)))
    }

    /// The access token of an `Authorization: Bearer` header, which a proof of that request names in `ath`.
    static func accessToken(of request: TransportRequest) -> String? {
        guard let value = request.header("Authorization"), value.lowercased().hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// `url` without its query and fragment, as `htu` names it.
    static func target(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        return components.url?.absoluteString ?? url.absoluteString
    }
}
