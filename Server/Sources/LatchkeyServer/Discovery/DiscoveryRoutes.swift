import Hummingbird
import LatchkeyAPI

/// What other backends use to verify Latchkey tokens: `GET /.well-known/jwks.json`,
/// `GET /.well-known/openid-configuration`, and `GET /api/v1/validate-token` for those that ask instead.
struct DiscoveryRoutes {
    let keyRing: SigningKeyRing
    let verifier: AccessTokenVerifier
    let issuer: String

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            APIOperation(
                .get, "/.well-known/jwks.json", id: "getJWKS", tag: "Discovery", summary: "Public signing keys (JWKS)",
                description:
                    "The public keys that verify Latchkey access tokens, as an RFC 7517 JSON Web Key Set of P-256 keys for ES256. Match a "
                    + "token's `kid` header to a key's `kid`. After `latchkey keys rotate`, retired keys stay here until their tokens have "
                    + "expired; `latchkey keys revoke` removes a key at once.",
                outcomes: [.init(200, "The key set.", body: JSONWebKeySet.self)])
        ) { _, _ in Answer(try self.keyRing.jwks, headers: [.cacheControl: "public, max-age=300"]) }
        api.add(
            APIOperation(
                .get, "/.well-known/openid-configuration", id: "getOpenIDConfiguration", tag: "Discovery", summary: "Provider metadata",
                description:
                    "Discovery metadata so any backend can verify Latchkey tokens with a stock JWT/OIDC library: the issuer, the JWKS URI "
                    + "and the signing algorithm. `token_endpoint` is the issuer followed by `/api/v1/auth/refresh`.",
                outcomes: [.init(200, "The provider metadata.", body: OpenIDConfiguration.self)])
        ) { _, _ in
            Answer(
                OpenIDConfiguration(
                    issuer: self.issuer, jwksURI: self.issuer + "/.well-known/jwks.json", tokenEndpoint: self.issuer + "/api/v1/auth/refresh"))
        }
        api.add(
            APIOperation(
                .get, "/api/v1/validate-token", id: "validateToken", tag: "Discovery", summary: "Validate the bearer token",
                description:
                    "Verifies the presented bearer token (signature, issuer, audience, expiry, revocation). A valid token answers 200 "
                    + "`{valid: true, sub, exp, kind}`; a missing, malformed, forged, expired or revoked one 401 "
                    + "`{valid: false, error: {code: \"invalid_token\", message}}`.",
                security: .bearer,
                outcomes: [
                    .init(200, "The token is valid.", body: ValidateTokenResponse.self),
                    .init(401, "The token is not valid.", body: InvalidTokenResponse.self, headers: ["WWW-Authenticate"]), .unavailable,
                ])
        ) { request, _ in
            do {
                guard let bearer = request.bearerToken else { throw APIError.missingToken }
                let token = try await self.verifier.verify(bearer)
                return Answer(ValidateTokenResponse(sub: token.userID, exp: token.claims.expiresAt, kind: token.kind))
            } catch {
                guard var apiError = APIError.translating(error), apiError.status == .unauthorized else { throw error }
                apiError.body = InvalidTokenResponse(error: .init(code: apiError.code, message: apiError.message))
                throw apiError
            }
        }
    }
}

/// `GET /.well-known/openid-configuration`.
struct OpenIDConfiguration: Codable, Sendable {
    var issuer: String
    var jwksURI: String
    var tokenEndpoint: String
    var algorithms = ["ES256"]
    var responseTypes = ["token"]
    var subjectTypes = ["public"]
    var grantTypes = ["refresh_token"]

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case tokenEndpoint = "token_endpoint"
        case algorithms = "id_token_signing_alg_values_supported"
        case responseTypes = "response_types_supported"
        case subjectTypes = "subject_types_supported"
        case grantTypes = "grant_types_supported"
    }
}
