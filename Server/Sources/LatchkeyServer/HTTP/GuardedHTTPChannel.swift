import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The HTTP/1.1 connections of a listener without event sockets (the console's `admin.port`, `metrics.port`): served as
/// Hummingbird's `HTTP1Channel` serves them, behind the same ``ConnectionGuards`` as the API's listener.
struct GuardedHTTPChannel: HTTPChannelHandler {
    struct Value: ServerChildChannelValue {
        /// Nil when the connection was refused at `http.max-connections` (it is closed already).
        let http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>?
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let guards: ConnectionGuards

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard self.guards.admit(channel, logger: logger) else { return channel.eventLoop.makeSucceededFuture(Value(http: nil, channel: channel)) }
        return channel.eventLoop.makeCompletedFuture {
            let headGuard = try self.guards.watch(channel, logger: logger) { headGuard in
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                    withPipeliningAssistance: false,  // NIOAsyncChannel serves one request at a time
                    withErrorHandling: false,  // RequestHeadGuard answers the parser's errors, with the envelope
                    withOutboundHeaderValidation: false)  // HTTPTypes validates headers
                return headGuard
            }
            return Value(http: try self.guards.serveHTTP(channel, headGuard: headGuard.value, logger: logger), channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = value.http else { return }
        await self.handleHTTP(asyncChannel: http, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 behind `guards` (a listener's own, so its connections are counted apart from other listeners').
    static func guarded(_ guards: ConnectionGuards) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in GuardedHTTPChannel(responder: responder, guards: guards) }
    }
}
