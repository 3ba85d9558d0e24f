import Hummingbird

/// Authenticates `Authorization: Bearer <token>` with ``AccessTokenVerifier``.
///
/// No bearer: the request passes on unauthenticated (routes then call
/// ``LatchkeyRequestContext/requireIdentity()``). A bearer that fails verification: 401 `invalid_token` at once.
public struct BearerAuthenticator: RouterMiddleware {
    public typealias Context = LatchkeyRequestContext
    let verifier: AccessTokenVerifier

    /// Authenticates with `verifier` (``LatchkeyServices/verifier``).
    public init(verifier: AccessTokenVerifier) { self.verifier = verifier }

    /// Verifies the bearer, when there is one, and hands the request on with ``LatchkeyRequestContext/identity`` set.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = request.bearerToken else { return try await next(request, context) }
        var context = context
        context.identity = try await self.verifier.verify(token)
        return try await next(request, context)
    }
}

extension Request {
    /// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 7235).
    ///
    /// On the hot path of every authenticated request: works on UTF-8 bytes, no Foundation string calls.
    var bearerToken: String? {
        guard let value = self.headers[.authorization] else { return nil }
        let bytes = value.utf8
        guard bytes.count > 7, bytes.prefix(6).lazy.map({ $0 | 0x20 }).elementsEqual("bearer".utf8), bytes.dropFirst(6).first == 0x20
        else { return nil }
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let start = bytes.dropFirst(7).firstIndex(where: { !isBlank($0) }),
            let end = bytes.lastIndex(where: { !isBlank($0) })
        else { return nil }
        return String(value[start...end])
    }
}
