import Crypto
import Foundation

/// Checks DPoP proofs: `typ: dpop+jwt`, ES256 by the P-256 key in the `jwk` header (its private part absent), the
/// signature, `htm` and `htu` naming this request, a `jti`, a current server nonce, `iat` within a day of this
/// server's clock, and, when it has `ath`, the hash of the access token the request carries (RFC 9449 §4.3).
///
/// The server nonce is what bounds a proof's life (30 to 60 minutes, whatever the client's clock says), so `iat` is
/// held only loosely: a phone whose clock is off by an hour still signs in. The `jti` is remembered for as long as
/// the nonce it carries is accepted, so no proof is accepted twice.
struct DPoPVerifier: Sendable {
    let nonces: DPoPNonces
    /// The origin clients reach this server at (`public-url`); the request's own `Host` is accepted too.
    let issuer: String
    let clock: any WallClock
    /// How far `iat` may be from this server's clock, either way.
    static let clockTolerance: TimeInterval = 86_400

    private struct Header: Decodable {
        let typ: String?
        let alg: String?
        let jwk: Key?
        struct Key: Decodable {
            let kty: String?
            let crv: String?
            let x: String?
            let y: String?
            let d: String?
        }
    }

    private struct Claims: Decodable {
        let jti: String?
        let htm: String?
        let htu: String?
        let iat: Double?
        let nonce: String?
        let ath: String?
    }

    /// Verifies `proof` for a request with `method` to `path` (no query) that came with the `Host` header `host` and
    /// the Bearer `accessToken`, if any.
    func verify(_ proof: String, method: String, path: String, host: String?, accessToken: String? = nil) throws -> VerifiedProof {
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Data(base64URLEncoded: String(parts[0])),
            let claimsData = Data(base64URLEncoded: String(parts[1])), let signature = Data(base64URLEncoded: String(parts[2])),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsData)
        else { throw DPoPRejection.malformed }
        guard header.typ?.lowercased() == "dpop+jwt", header.alg == "ES256", let jwk = header.jwk, jwk.kty == "EC", jwk.crv == "P-256",
            jwk.d == nil, let x = jwk.x.flatMap({ Data(base64URLEncoded: $0) }), let y = jwk.y.flatMap({ Data(base64URLEncoded: $0) }),
            x.count == 32, y.count == 32, let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
        else { throw DPoPRejection.unsupportedKey }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw DPoPRejection.badSignature }
        guard let tokenID = claims.jti, !tokenID.isEmpty, tokenID.utf8.count <= 256, let issuedAt = claims.iat else {
            throw DPoPRejection.malformed
        }
        guard claims.htm == method, let htu = claims.htu, self.names(htu, path: path, host: host) else { throw DPoPRejection.wrongRequest }
        let now = self.clock.now()
        guard abs(now.timeIntervalSince1970 - issuedAt) <= Self.clockTolerance else { throw DPoPRejection.outsideTimeWindow }
        guard let nonce = claims.nonce, self.nonces.isValid(nonce, now: now) else { throw DPoPRejection.nonceRequired }
        if let ath = claims.ath {
            guard let accessToken, Secret.constantTimeEquals(ath, Self.accessTokenHash(accessToken)) else { throw DPoPRejection.wrongAccessToken }
        }
        return VerifiedProof(
            thumbprint: key.jwkThumbprint, tokenIDHash: Secret.hash(tokenID), expiresAt: now + DPoPNonces.lifetime,
            provesAccessToken: claims.ath != nil)
    }

    /// `ath`: the base64url SHA-256 of the access token's ASCII text.
    static func accessTokenHash(_ accessToken: String) -> String {
        Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString()
    }

    /// Whether `htu` is this server's URL of `path`: at its public origin, or at the origin the request was sent to.
    private func names(_ htu: String, path: String, host: String?) -> Bool {
        guard let url = URLComponents(string: htu), url.query == nil, url.fragment == nil, let origin = Self.origin(url),
            url.percentEncodedPath == path
        else { return false }
        if let issuer = URLComponents(string: self.issuer).flatMap(Self.origin), origin == issuer { return true }
        guard let host = host?.lowercased() else { return false }
        return ["http://" + host, "https://" + host].contains(origin)
    }

    private static func origin(_ url: URLComponents) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        return scheme + "://" + host + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }
}
