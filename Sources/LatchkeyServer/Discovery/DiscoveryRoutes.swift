import Hummingbird

/// `GET /.well-known/jwks.json` and `GET /.well-known/openid-configuration`, so any stack can verify
/// Latchkey tokens with a stock JWT library.
@available(LatchkeyServer 1.0, *)
struct DiscoveryRoutes {
    let keyRing: SigningKeyRing
    let issuer: String

    struct OpenIDConfiguration: Encodable {
        let issuer: String
        let jwksURI: String
        let tokenEndpoint: String
        let algorithms = ["ES256"]
        let responseTypes = ["token"]
        let subjectTypes = ["public"]
        let grantTypes = ["refresh_token"]

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

    func add(to router: Router<LatchkeyRequestContext>) {
        router.get(".well-known/jwks.json") { _, _ in
            var response = try jsonResponse(try self.keyRing.jwks)
            response.headers[.cacheControl] = "public, max-age=300"
            return response
        }
        router.get(".well-known/openid-configuration") { _, _ in
            try jsonResponse(
                OpenIDConfiguration(
                    issuer: self.issuer, jwksURI: self.issuer + "/.well-known/jwks.json", tokenEndpoint: self.issuer + "/api/v1/auth/refresh"))
        }
    }
}
