import Hummingbird
import NIOCore

/// The per-request context of Latchkey routes: the verified bearer token once authenticated, the request's DPoP proof
/// once checked, and the body limit, decoder and encoder Hummingbird's `request.decode(as:context:)` and
/// `ResponseEncodable` answers use.
public struct LatchkeyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The bearer token, set by ``BearerAuthenticator`` when the request carried a valid one.
    public var identity: VerifiedToken?
    /// The request's DPoP proof, set by the proof middleware of the routes that take one when the request carried one.
    package var proof: VerifiedProof?
    /// Who called the backend API: `backend` or `backend:<key name>`, set by the backend key's check.
    package var backendActor: String?
    /// The peer's address on the socket.
    public let remoteAddress: SocketAddress?
    /// The largest request body a route decodes (`http.max-body-size`); larger ones get 413.
    public var maxUploadSize: Int = 64 * 1024
    /// Set when the request is a connection's WebSocket upgrade request, which ``EventSocketServer`` runs through the
    /// router before it upgrades.
    package var upgrading = false

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.remoteAddress = source.channel.remoteAddress
    }

    /// JSON with field-naming 400 answers that never echo what was sent.
    public var requestDecoder: LatchkeyRequestDecoder { LatchkeyRequestDecoder() }
    /// Sorted-key JSON with ISO 8601 dates.
    public var responseEncoder: LatchkeyResponseEncoder { LatchkeyResponseEncoder() }

    /// The verified bearer token, or 401 `invalid_token` ("send Authorization: Bearer") when the request had none.
    public func requireIdentity() throws -> VerifiedToken {
        guard let identity = self.identity else { throw APIError.missingToken }
        return identity
    }
}

/// Applies the configured request limits to every request's context (Hummingbird reads them from the context).
struct RequestLimitsMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let maxBodySize: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = self.maxBodySize
        return try await next(request, context)
    }
}
