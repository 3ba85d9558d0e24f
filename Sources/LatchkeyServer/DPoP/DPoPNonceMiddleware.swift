import HTTPTypes
import Hummingbird

/// Puts the current server nonce in a `DPoP-Nonce` header on every answer of the routes that take DPoP proofs,
/// errors included (RFC 9449 §8), so a client always holds a nonce for its next proof.
@available(LatchkeyServer 1.0, *)
struct DPoPNonceMiddleware<Context: RequestContext>: RouterMiddleware {
    let nonces: DPoPNonces
    let clock: any WallClock
    static var header: HTTPField.Name { HTTPField.Name("DPoP-Nonce")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let nonce = self.nonces.current(now: self.clock.now())
        do {
            var response = try await next(request, context)
            response.headers[Self.header] = nonce
            return response
        } catch {
            guard var apiError = APIError.translating(error) else { throw error }
            apiError.extraHeaders[Self.header] = nonce
            throw apiError
        }
    }
}
