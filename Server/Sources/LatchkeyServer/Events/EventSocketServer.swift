import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LatchkeyAPI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The HTTP/1.1 server with WebSocket upgrades of `GET /api/v1/events`, on SwiftNIO's own WebSocket upgrader.
///
/// NIO asks `shouldUpgrade` before answering an upgrade request; this answers it with the router itself, so the upgrade
/// request gets the same logging, limits and token checks as any other, and a refused upgrade gets the router's own
/// answer (the 401 envelope with `WWW-Authenticate`, a 429, a 404…). Every other request is served as Hummingbird's
/// HTTP/1.1 channel serves it. An accepted socket is an ``EventSocketHandler`` in the channel pipeline: it costs no task
/// while it waits, and the hub writes to it from any thread.
///
/// Why not hummingbird-websocket (issue 28, measured 2026-11-27 with `scripts/bench --events-only`, 10,000 idle
/// sockets): its `HTTP1WebSocketUpgradeChannel` with the same router decision costs 39.8 KB per idle socket (a task,
/// two child tasks and an async stream each) against 7.7 KB here, above the 20 KB bar; and it answers every refused
/// upgrade with a bare 400, where this answers with the router's own 401, 404 or 429 and its envelope.
enum EventSocketServer {
    static func builder(
        responder: some HTTPResponder<LatchkeyRequestContext>, hub: EventHub, trustedProxies: Set<String>, guards: ConnectionGuards
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { httpResponder in
            EventSocketChannel(responder: httpResponder, router: responder, hub: hub, trustedProxies: trustedProxies, guards: guards)
        }
    }
}

/// One connection: HTTP/1.1, upgraded to an event socket when its first request is an accepted `GET /api/v1/events`.
struct EventSocketChannel<Router: HTTPResponder>: HTTPChannelHandler where Router.Context == LatchkeyRequestContext {
    /// What the first request of a connection turned it into.
    enum Negotiated: Sendable {
        /// Plain HTTP/1.1.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade the router refused: its answer is written, then the connection closes.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, Refusal)
        /// An event socket, served by ``EventSocketHandler`` in the pipeline.
        case socket
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    /// The router's answer to a refused upgrade.
    struct Refusal: Sendable {
        var head: HTTPResponse
        var body: ByteBuffer
    }

    private enum Decision: Sendable {
        case accept(AcceptedEventSocket)
        case refuse(Refusal)
    }

    let responder: HTTPChannelHandler.Responder
    let router: Router
    let hub: EventHub
    let trustedProxies: Set<String>
    let guards: ConnectionGuards

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard self.guards.admit(channel, logger: logger) else {
            let refused: EventLoopFuture<Negotiated> = channel.eventLoop.makeFailedFuture(ConnectionLimit.Refused())
            return channel.eventLoop.makeSucceededFuture(Value(negotiated: refused, channel: channel))
        }
        return channel.eventLoop.makeCompletedFuture {
            // Bytes, heads and parser errors are watched from the start, as on every listener: see ConnectionGuards.
            let negotiated = try self.guards.watch(channel, logger: logger) { headGuard in
                try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                    configuration: self.pipelineConfiguration(headGuard: headGuard, logger: logger))
            }
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    /// HTTP/1.1 whose first request may upgrade to an event socket, the router deciding.
    private func pipelineConfiguration(
        headGuard: NIOLoopBound<RequestHeadGuard>, logger: Logger
    ) -> NIOUpgradableHTTPServerPipelineConfiguration<Negotiated> {
        let decision = NIOLockedValueBox<Decision?>(nil)
        let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
            maxFrameSize: EventSocketHandler.maxMessageSize,
            shouldUpgrade: { channel, head in
                headGuard.value.firstHeadRead()
                let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                promise.completeWithTask {
                    let decided = await self.decide(head, channel: channel, logger: logger)
                    decision.withLockedValue { $0 = decided }
                    if case .accept = decided { return HTTPHeaders() }
                    return nil
                }
                return promise.futureResult
            },
            upgradePipelineHandler: { channel, _ in
                headGuard.value.stop()
                return channel.eventLoop.makeCompletedFuture {
                    guard case .accept(let accepted) = decision.withLockedValue({ $0 }) else { throw ChannelError.inappropriateOperationForState }
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: EventSocketHandler.maxMessageSize),
                        EventSocketHandler(hub: self.hub, accepted: accepted))
                    return .socket
                }
            })
        let upgrades = NIOTypedHTTPServerUpgradeConfiguration(
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                headGuard.value.firstHeadRead()
                return channel.eventLoop.makeCompletedFuture {
                    let http = try self.guards.serveHTTP(channel, headGuard: headGuard.value, logger: logger)
                    if case .refuse(let refusal) = decision.withLockedValue({ $0 }) { return .refused(http, refusal) }
                    return .http(http)
                }
            })
        var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(upgradeConfiguration: upgrades)
        configuration.enablePipelining = false  // NIOAsyncChannel serves one request at a time
        configuration.enableErrorHandling = false  // RequestHeadGuard answers the parser's errors, with the envelope
        configuration.enableResponseHeaderValidation = false  // HTTPTypes validates headers
        return configuration
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http(let http):
                await self.handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let refusal):
                try await http.executeThenClose { _, outbound in
                    try await outbound.write(.head(refusal.head))
                    if refusal.body.readableBytes > 0 { try await outbound.write(.body(refusal.body)) }
                    try await outbound.write(.end(nil))
                }
            case .socket:
                // The socket lives on in its pipeline without a task; the hub closes it at shutdown.
                return
            }
        } catch let error as ChannelError where error == .inputClosed {
            // The client went away before its first request ended.
        } catch is ConnectionLimit.Refused {
            // Closed at once: http.max-connections are open.
        } catch {
            logger.debug("Connection ended before its first request was answered", metadata: ["error.type": "\(type(of: error))"])
        }
    }

    /// Runs the upgrade request through the router: only the events route's 200 (a valid token, room for another
    /// socket) upgrades; any other answer is the connection's answer.
    private func decide(_ head: HTTPRequestHead, channel: any Channel, logger: Logger) async -> Decision {
        do {
            let request = Request(head: try HTTPRequest(head, secure: false, splitCookie: false), body: .init(buffer: ByteBuffer()))
            var logger = logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())  // as Hummingbird gives every request
            var context = LatchkeyRequestContext(source: .init(channel: channel, logger: logger))
            context.upgrading = true
            let response = try await self.router.respond(to: request, context: context)
            if response.status == .ok, request.uri.path == EventRoutes.path, let token = QueryTokenAuthenticator.token(of: request),
                let verified = try? await self.hub.verifier.verify(token)
            {
                return .accept(
                    AcceptedEventSocket(token: token, verified: verified, client: context.limitKey(of: request, trustedProxies: self.trustedProxies)))
            }
            return .refuse(await Self.refusal(of: response))
        } catch {
            var head = HTTPResponse(status: .badRequest)
            head.headerFields[.connection] = "close"
            head.headerFields[.contentLength] = "0"
            return .refuse(Refusal(head: head, body: ByteBuffer()))
        }
    }

    private static func refusal(of response: Response) async -> Refusal {
        let collector = BodyCollector()
        try? await response.body.write(CollectingWriter(collector: collector))
        var head = response.head
        head.headerFields[.contentLength] = String(collector.buffer.readableBytes)
        head.headerFields[.connection] = "close"
        return Refusal(head: head, body: collector.buffer)
    }

    private final class BodyCollector: @unchecked Sendable {
        var buffer = ByteBuffer()
    }

    private struct CollectingWriter: ResponseBodyWriter {
        let collector: BodyCollector
        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.collector.buffer.writeBuffer(&buffer)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// Where the hub sends a socket's frames and its end, from any thread.
package protocol EventSocketSink: Sendable {
    func deliver(_ outgoing: EventHub.Outgoing)
}

/// An upgrade the router accepted: the socket's token, as verified, and its client's limit key.
struct AcceptedEventSocket: Sendable {
    var token: String
    var verified: VerifiedToken
    var client: String
}

/// An accepted event socket in its channel pipeline: registers with the hub, writes the hub's frames, reads the client's,
/// pings, and runs the closing handshake. Everything here runs on the channel's event loop; ``Writer`` hops there.
final class EventSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The largest message a client may send (frames and fragmented messages alike).
    static let maxMessageSize = 16 * 1024
    /// How long the server waits for the client's close frame after sending its own.
    static let closeTimeout = TimeAmount.seconds(10)

    private let hub: EventHub
    private let socket: AcceptedEventSocket
    private var context: ChannelHandlerContext?
    private var id: UInt64?
    private var pinger: RepeatedTask?
    private var awaitingPong = false
    private var closeSent = false

    init(hub: EventHub, accepted: AcceptedEventSocket) {
        self.hub = hub
        self.socket = accepted
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let writer = Writer(handler: NIOLoopBound(self, eventLoop: context.eventLoop), eventLoop: context.eventLoop)
        self.id = self.hub.register(token: self.socket.token, verified: self.socket.verified, client: self.socket.client, sink: writer)
        let interval = TimeAmount.nanoseconds(Int64(self.hub.configuration.pingInterval * 1_000_000_000))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.pinger = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in bound.value.ping() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.finish()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            guard let id = self.id, !self.closeSent else { return }
            guard let text = String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) else {
                return self.close(code: .dataInconsistentWithMessage, reason: "text frames are UTF-8")
            }
            self.hub.received(text, on: id)
        case .binary:
            guard let id = self.id, !self.closeSent else { return }
            self.hub.reply(id, error: "bad_frame", "Frames are JSON text, not binary.")
        case .ping:
            guard !self.closeSent else { return }
            context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            self.awaitingPong = false
        case .connectionClose:
            // The socket is over for the hub before the connection closes: whoever sees the close sees the hub without it.
            self.unregister()
            if self.closeSent {
                context.close(promise: nil)
            } else {
                // The client ends the socket: answer with its code, then close.
                self.closeSent = true
                var answer = context.channel.allocator.buffer(capacity: 2)
                if let code = frame.unmaskedData.peekWebSocketErrorCode() { answer.write(webSocketErrorCode: code) }
                let channel = context.channel
                context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer))).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        default:
            self.close(code: .protocolError, reason: "unexpected frame")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The aggregator's errors: a message over 16 KiB, too many fragments, a broken sequence.
        if error is NIOWebSocketFrameAggregator.Error {
            self.close(code: .messageTooLarge, reason: "messages are at most 16 KiB")
        } else {
            context.close(promise: nil)
        }
    }

    /// Writes what the hub asked for.
    fileprivate func deliver(_ outgoing: Outgoing) {
        guard let context = self.context, !self.closeSent else { return }
        switch outgoing {
        case .text(let bytes):
            context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: bytes)), promise: nil)
        case .close(let code, let reason):
            self.close(code: .init(codeNumber: Int(code)), reason: reason)
        }
    }

    /// Sends a close frame, then waits `closeTimeout` for the client's before closing the connection.
    private func close(code: WebSocketErrorCode, reason: String) {
        guard let context = self.context, !self.closeSent else { return }
        self.closeSent = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
    }

    private func ping() {
        guard let context = self.context, !self.closeSent else { return }
        if self.awaitingPong {
            // No pong since the last ping: the client is gone.
            return context.close(promise: nil)
        }
        self.awaitingPong = true
        context.writeAndFlush(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())), promise: nil)
    }

    private func finish() {
        self.pinger?.cancel()
        self.pinger = nil
        self.context = nil
        self.unregister()
    }

    private func unregister() {
        guard let id = self.id else { return }
        self.id = nil
        self.hub.unregister(id)
    }

    /// A frame's bytes or the socket's end, on the way to the event loop.
    fileprivate enum Outgoing {
        case text(ByteBuffer)
        case close(code: UInt16, reason: String)
    }

    /// The hub's way in: encodes on the caller's thread, writes on the event loop, in the order delivered.
    struct Writer: EventSocketSink {
        let handler: NIOLoopBound<EventSocketHandler>
        let eventLoop: any EventLoop

        func deliver(_ outgoing: EventHub.Outgoing) {
            let next: Outgoing
            switch outgoing {
            case .frame(let frame):
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = .iso8601
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                guard let data = try? encoder.encode(frame) else { return }
                next = .text(ByteBuffer(bytes: data))
            case .close(let code, let reason):
                next = .close(code: code, reason: reason)
            }
            let handler = self.handler
            self.eventLoop.execute { handler.value.deliver(next) }
        }
    }
}
