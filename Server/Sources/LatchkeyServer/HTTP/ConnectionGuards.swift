import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// What every listener of the server does with the connections it accepts: the API's (``EventSocketServer``), the
/// console's on `admin.port` and the metrics' on `metrics.port` (``GuardedHTTPChannel``) set up each connection through
/// these steps, so a slow or malformed connection is answered and closed the same way on every port.
///
/// `http.max-connections` counts per listener: each listener has its own ``ConnectionLimit``, so a flood of one port
/// never locks support staff out of the console's. `http.idle-timeout` and `http.header-timeout` are
/// ``RequestHeadGuard``'s.
struct ConnectionGuards: Sendable {
    let idleTimeout: TimeAmount
    let headerTimeout: TimeAmount
    let connections: ConnectionLimit

    /// The guards of one listener (`http.idle-timeout`, `http.header-timeout` in seconds, `http.max-connections`), with
    /// a connection count of its own.
    init(idleTimeout: Double, headerTimeout: Double, maxConnections: Int) {
        self.idleTimeout = .nanoseconds(Int64(idleTimeout * 1_000_000_000))
        self.headerTimeout = .nanoseconds(Int64(headerTimeout * 1_000_000_000))
        self.connections = ConnectionLimit(maximum: maxConnections)
    }

    /// Counts `channel` in until it closes; when the listener has `http.max-connections` open, closes it at once and
    /// returns false.
    func admit(_ channel: any Channel, logger: Logger) -> Bool {
        guard self.connections.admit(channel, logger: logger) else {
            channel.close(promise: nil)
            return false
        }
        return true
    }

    /// Puts a ``RequestHeadGuard`` around the HTTP/1.1 decoder that `addDecoder` adds to `channel`'s pipeline: its bytes
    /// watcher in front of it, its parser-error watcher behind it (NIO's own error handler must stay off).
    func watch<Result>(
        _ channel: any Channel, logger: Logger, addDecoder: (NIOLoopBound<RequestHeadGuard>) throws -> Result
    ) throws -> Result {
        let (bytes, parserErrors) = RequestHeadGuard.make(idleTimeout: self.idleTimeout, headerTimeout: self.headerTimeout, logger: logger)
        try channel.pipeline.syncOperations.addHandler(bytes)
        let result = try addDecoder(NIOLoopBound(bytes.headGuard, eventLoop: channel.eventLoop))
        try channel.pipeline.syncOperations.addHandler(parserErrors)
        return result
    }

    /// The handlers that serve HTTP/1.1 behind the decoder (with `headGuard` seeing where each request and response
    /// ends), and the connection as request and response parts, as Hummingbird's `HTTP1Channel` serves it.
    func serveHTTP(
        _ channel: any Channel, headGuard: RequestHeadGuard, logger: Logger
    ) throws -> NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart> {
        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try channel.pipeline.syncOperations.addHandler(RequestHeadGuard.PartsWatcher(headGuard: headGuard))
        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: Duration(self.idleTimeout), logger: logger))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }
}
