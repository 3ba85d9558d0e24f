import Hummingbird
import NIOCore

/// The per-request context of Latchkey routes: the verified bearer token, once authenticated.
@available(LatchkeyServer 1.0, *)
public struct LatchkeyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The bearer token, set by ``BearerAuthenticator`` when the request carried a valid one.
    public var identity: VerifiedToken?
    /// The peer's address on the socket.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The verified bearer token, or 401 `invalid_token` ("send Authorization: Bearer") when the request had none.
    public func requireIdentity() throws -> VerifiedToken {
        guard let identity = self.identity else { throw APIError.missingToken }
        return identity
    }
}
