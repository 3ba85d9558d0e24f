import HTTPTypes
import Hummingbird

/// The routes that take DPoP proofs (RFC 9449): checks the request's `DPoP` header when there is one (sent once;
/// 400 otherwise) and hands the verified proof on in ``LatchkeyRequestContext/proof``; puts the current server nonce
/// in a `DPoP-Nonce` header on every answer, errors included (§8), so a client always holds one for its next proof.
///
/// It runs before the route's rate limit: a proof answered "use this nonce" is not counted as an attempt.
struct DPoPProofMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let verifier: DPoPVerifier
    static let proofHeader = HTTPField.Name("DPoP")!
    static let nonceHeader = HTTPField.Name("DPoP-Nonce")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let nonce = self.verifier.nonces.current(now: self.verifier.clock.now())
        do {
            var context = context
            context.proof = try self.proof(of: request)
            var response = try await next(request, context)
            response.headers[Self.nonceHeader] = nonce
            return response
        } catch {
            guard var apiError = APIError.translating(error) else { throw error }
            apiError.extraHeaders[Self.nonceHeader] = nonce
            throw apiError
        }
    }

    /// The request's proof, verified for its method and path; nil when it carries none.
    private func proof(of request: Request) throws -> VerifiedProof? {
        let values = request.headers[values: Self.proofHeader]
        guard values.count <= 1 else { throw DPoPRejection.duplicated }
        guard let proof = values.first, !proof.isEmpty else { return nil }
        return try self.verifier.verify(
            proof, method: request.method.rawValue, path: request.uri.path, host: request.head.authority, accessToken: request.bearerToken)
    }
}
