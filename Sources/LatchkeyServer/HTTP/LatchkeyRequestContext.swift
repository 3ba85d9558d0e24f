import Hummingbird
import HummingbirdAuth
import NIOCore

/// The per-request context of Latchkey routes: the verified bearer token, once authenticated.
public struct LatchkeyRequestContext: AuthRequestContext, RequestContext {
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
}
