import Foundation
import HTTPTypes
import LatchkeyAPI
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Keeps a connection from being held open by a request head that never ends or cannot be read (slowloris).
///
/// A connection that sends nothing is closed after `http.idle-timeout`. From the first byte of a request head, the head
/// has `http.header-timeout` to end, or the server answers 408 and closes. A head NIO's parser refuses is answered 400
/// and closed; a body it refuses reaches the route, whose error middleware answers 400, and the connection closes after
/// that answer. Both answers carry the error envelope; they are written as bytes at the front of the pipeline, since
/// there is no request to answer through the router.
///
/// It sees the connection through three handlers: ``BytesWatcher`` first in the pipeline (bytes arriving, and where the
/// answers are written), ``ParserErrorWatcher`` behind the HTTP decoder (the parser's errors; it never reads the parts,
/// so it may stay in a pipeline that becomes a WebSocket), and ``PartsWatcher`` behind the HTTP/1.1 codec once the
/// connection serves HTTP (where each request head and body and each response ends). Everything runs on the
/// connection's event loop.
final class RequestHeadGuard {
    private let idleTimeout: TimeAmount
    private let headerTimeout: TimeAmount
    private let logger: Logger
    /// The front handler's context: answers are written there, below the HTTP encoder.
    private var front: ChannelHandlerContext?
    private var deadline: Scheduled<Void>?
    /// The deadline is the idle timeout of a connection that has sent nothing yet.
    private var idleDeadline = false
    /// The router's upgrade check read a head that ``PartsWatcher`` has not seen yet.
    private var headAwaitingRoute = false
    /// A head was read whose request has not ended.
    private var requestOpen = false
    /// Heads read whose responses have not ended (more than one when a client pipelines).
    private var pendingResponses = 0
    /// The connection serves HTTP through ``PartsWatcher`` (so a body's error reaches the route reading it).
    private var serving = false
    /// The parser failed after the last request was read: answer once its response has ended.
    private var refuseAfterResponse = false
    /// The route answered a body the parser refused: close once that answer has ended.
    private var closeAfterResponse = false
    /// Nothing more to watch: the connection was answered here, or became a WebSocket.
    private var finished = false

    init(idleTimeout: TimeAmount, headerTimeout: TimeAmount, logger: Logger) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.logger = logger
    }

    /// The three handlers over one guard: ``BytesWatcher`` goes first in the pipeline, ``ParserErrorWatcher`` behind
    /// the HTTP decoder; ``PartsWatcher`` is made when the connection turns out to serve HTTP.
    static func make(idleTimeout: TimeAmount, headerTimeout: TimeAmount, logger: Logger) -> (BytesWatcher, ParserErrorWatcher) {
        let headGuard = RequestHeadGuard(idleTimeout: idleTimeout, headerTimeout: headerTimeout, logger: logger)
        return (BytesWatcher(headGuard: headGuard), ParserErrorWatcher(headGuard: headGuard))
    }

    private var awaitingHead: Bool { !self.headAwaitingRoute && !self.requestOpen && self.pendingResponses == 0 }

    // MARK: events

    fileprivate func connected(_ context: ChannelHandlerContext) {
        self.front = context
        guard self.deadline == nil, !self.finished else { return }
        let channel = context.channel
        // Nothing sent yet: close quietly after the idle timeout, as Hummingbird closes an idle connection.
        self.deadline = context.eventLoop.scheduleTask(in: self.idleTimeout) { channel.close(promise: nil) }
        self.idleDeadline = true
    }

    fileprivate func bytesArrived(_ context: ChannelHandlerContext) {
        guard !self.finished, self.awaitingHead, self.deadline == nil || self.idleDeadline else { return }
        self.deadline?.cancel()
        self.idleDeadline = false
        self.deadline = context.eventLoop.scheduleTask(in: self.headerTimeout) { [self] in
            self.deadline = nil
            self.logger.debug("Closing a connection whose request head did not end within http.header-timeout")
            self.answer(.requestTimeout, .requestTimeout, "The request head did not arrive within http.header-timeout; the connection is closed.")
        }
    }

    /// The first request's head was read by the router's upgrade check (``PartsWatcher`` sees it later, if at all).
    func firstHeadRead() {
        self.deadline?.cancel()
        self.deadline = nil
        self.headAwaitingRoute = true
    }

    fileprivate func headRead() {
        self.deadline?.cancel()
        self.deadline = nil
        self.headAwaitingRoute = false
        self.requestOpen = true
        self.pendingResponses += 1
    }

    fileprivate func requestEnded() { self.requestOpen = false }

    /// Called after a response's end was passed on; `written` completes when it is on the wire.
    fileprivate func responseEnded(_ written: EventLoopFuture<Void>) {
        self.pendingResponses = max(0, self.pendingResponses - 1)
        guard self.pendingResponses == 0 else { return }
        if self.refuseAfterResponse {
            self.answerParseError()
        } else if self.closeAfterResponse, let channel = self.front?.channel {
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    fileprivate func startServing() { self.serving = true }

    /// The connection became a WebSocket: its handlers take over.
    func stop() {
        self.finished = true
        self.deadline?.cancel()
        self.deadline = nil
    }

    fileprivate func closed() {
        self.deadline?.cancel()
        self.deadline = nil
        self.front = nil
    }

    /// NIO's parser refused what arrived: whether the error should go on to the route reading the body.
    fileprivate func parserFailed() -> Bool {
        guard !self.finished else { return true }
        if self.requestOpen && self.serving {
            self.closeAfterResponse = true
            return true
        }
        if self.headAwaitingRoute || self.pendingResponses > 0 {
            self.refuseAfterResponse = true
        } else {
            self.answerParseError()
        }
        return false
    }

    // MARK: answers

    private func answerParseError() {
        self.logger.debug("Closing a connection whose request could not be read as HTTP/1.1")
        self.answer(.badRequest, .invalidRequest, "The request is not well-formed HTTP/1.1; the connection is closed.")
    }

    /// Writes `status` with the envelope and `Connection: close` straight to the socket, then closes.
    private func answer(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String) {
        guard !self.finished, let context = self.front else { return }
        self.finished = true
        self.deadline?.cancel()
        self.deadline = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(ErrorEnvelope(code: code, message: message))) ?? Data()
        var bytes = context.channel.allocator.buffer(capacity: 160 + body.count)
        bytes.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        bytes.writeString("Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        bytes.writeBytes(body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: handlers

    /// First in the pipeline: sees bytes arrive, and writes the guard's answers below the HTTP encoder.
    final class BytesWatcher: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let headGuard: RequestHeadGuard

        fileprivate init(headGuard: RequestHeadGuard) { self.headGuard = headGuard }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { self.headGuard.connected(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            self.headGuard.connected(context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.headGuard.closed()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { self.headGuard.closed() }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.headGuard.bytesArrived(context)
            context.fireChannelRead(data)
        }
    }

    /// Behind the HTTP decoder: answers the parser's errors. It never unwraps what passes, so it can stay when the
    /// connection becomes a WebSocket.
    final class ParserErrorWatcher: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Never
        let headGuard: RequestHeadGuard

        fileprivate init(headGuard: RequestHeadGuard) { self.headGuard = headGuard }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard error is HTTPParserError else { return context.fireErrorCaught(error) }
            if self.headGuard.parserFailed() { context.fireErrorCaught(error) }
        }
    }

    /// Behind the HTTP/1.1 codec of a connection that serves HTTP: where heads, request bodies and responses end.
    final class PartsWatcher: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        let headGuard: RequestHeadGuard

        init(headGuard: RequestHeadGuard) {
            self.headGuard = headGuard
            headGuard.startServing()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch Self.unwrapInboundIn(data) {
            case .head: self.headGuard.headRead()
            case .body: break
            case .end: self.headGuard.requestEnded()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .end = Self.unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            self.headGuard.responseEnded(written.futureResult)
        }
    }
}
