// On Linux, FoundationNetworking opens WebSockets only through a libcurl built with them (curl 8.11 or later; Debian 12
// ships 7.88), so `latchkey-device watch` opens its socket with SwiftNIO there. Apple platforms use the SDK's default,
// `URLSessionWebSocketTask`. An app on Linux can pass a transport like this one to `LatchkeySession(webSocketTransport:)`.
#if !canImport(Darwin) && canImport(NIOWebSocket)
import Foundation
import LatchkeyClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A ``WebSocketTransport`` on SwiftNIO: `ws` and `wss` (the system's trust roots), the request's headers sent with the
/// upgrade, a refused upgrade thrown with the server's status and headers, server pings answered, and close codes as
/// the server sent them (4001, 4002, 4008 included).
struct NIOWebSocketTransport: WebSocketTransport {
    /// How long connecting and the upgrade may take together.
    var timeout: TimeAmount = .seconds(20)
    /// The largest message accepted from the server (event frames are a few hundred bytes).
    var maxMessageSize = 1 << 16

    private enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused(NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>)
    }

    func connect(_ request: TransportRequest) async throws -> any WebSocketConnection {
        guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            let host = components.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), !host.isEmpty,  // IPv6 unbracketed
            let scheme = components.scheme?.lowercased(), scheme == "ws" || scheme == "wss"
        else { throw WebSocketTransportError.unsupported("only ws and wss URLs can be opened") }
        let secure = scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        let target =
            (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: components.port.map { "\(Self.hostField(host)):\($0)" } ?? Self.hostField(host))
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        let sslContext = secure ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        let maxMessageSize = self.maxMessageSize
        let timeout = self.timeout

        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(self.timeout)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let serverName = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxMessageSize) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOWebSocketFrameAggregator(
                                    minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: maxMessageSize))
                            return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                        }
                    }
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(upgradeRequestHead: head, upgraders: [upgrader]) { channel in
                        channel.eventLoop.makeCompletedFuture { .refused(try NIOAsyncChannel(wrappingChannelSynchronously: channel)) }
                    }
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // The server's first frame may come in the same read as its 101: hand it on, never drop it.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                    // A server that accepts the connection but never answers the upgrade: closing fails `upgrade`.
                    let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                    upgrade.whenComplete { _ in deadline.cancel() }
                    return upgrade
                }
            }
        switch try await upgrade.get() {
        case .webSocket(let channel):
            return NIOWebSocketConnection(channel: channel)
        case .refused(let channel):
            throw WebSocketTransportError.refused(try await Self.response(from: channel))
        }
    }

    /// The answer that refused the upgrade: its status and headers (the body is read and dropped), then the connection closes.
    private static func response(from channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>) async throws -> TransportResponse {
        let raw = channel.channel
        let deadline = raw.eventLoop.scheduleTask(in: .seconds(10)) { raw.close(promise: nil) }
        defer { deadline.cancel() }
        return try await channel.executeThenClose { inbound, _ in
            var response = TransportResponse(status: 0)
            var body = Data()
            for try await part in inbound {
                switch part {
                case .head(let head):
                    response.status = Int(head.status.code)
                    for (name, value) in head.headers { response.headers[name] = value }
                case .body(let buffer):
                    if body.count < 1 << 16 { body.append(contentsOf: buffer.readableBytesView) }
                case .end:
                    response.body = body
                    return response
                }
            }
            guard response.status != 0 else { throw WebSocketClosedEarly() }
            return response
        }
    }

    /// `host` as the `Host` field writes it: an IPv6 address in brackets.
    private static func hostField(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}

/// The server closed the connection before it answered the upgrade.
private struct WebSocketClosedEarly: Error, CustomStringConvertible {
    var description: String { "The server closed the connection before it answered the WebSocket upgrade." }
}

/// One upgraded connection: a task reads the frames into `messages` and writes what `send` and `close` queue.
private final class NIOWebSocketConnection: WebSocketConnection, Sendable {
    private enum Outgoing: Sendable {
        case text(String)
        case pong(ByteBuffer)
        /// A close frame with this code (the client's own, or echoing the server's).
        case close(UInt16?)
    }

    private let messages: Messages
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let channel: any Channel

    init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) {
        let (messages, received) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream()
        let (sends, outgoing) = AsyncStream<Outgoing>.makeStream()
        self.messages = Messages(messages.makeAsyncIterator())
        self.outgoing = outgoing
        self.channel = channel.channel
        Task { await Self.run(channel, sends: sends, outgoing: outgoing, received: received) }
    }

    /// One caller at a time, as ``WebSocketConnection`` asks.
    func receive() async throws -> WebSocketMessage {
        guard let message = try await self.messages.iterator.next() else { return .closed(code: nil) }
        return message
    }

    /// The reading end of the frames the connection's task yields; only ``receive()`` touches it.
    private final class Messages: @unchecked Sendable {
        var iterator: AsyncThrowingStream<WebSocketMessage, any Error>.AsyncIterator
        init(_ iterator: AsyncThrowingStream<WebSocketMessage, any Error>.AsyncIterator) { self.iterator = iterator }
    }

    func send(_ text: String) async throws {
        guard case .enqueued = self.outgoing.yield(.text(text)) else { throw ChannelError.ioOnClosedChannel }
    }

    /// Sends a close frame (1000); the connection ends when the server answers it, or after two seconds.
    func close() {
        self.outgoing.yield(.close(1000))
        self.outgoing.finish()
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    private static func run(
        _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, sends: AsyncStream<Outgoing>, outgoing: AsyncStream<Outgoing>.Continuation,
        received: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    ) async {
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await item in sends {
                            switch item {
                            case .text(let text): try await outbound.write(Self.frame(.text, ByteBuffer(string: text)))
                            case .pong(let data): try await outbound.write(Self.frame(.pong, data))
                            case .close(let code):
                                var data = ByteBuffer()
                                if let code { data.writeInteger(code) }
                                try await outbound.write(Self.frame(.connectionClose, data))
                                return  // nothing may follow a close frame
                            }
                        }
                    }
                    for try await frame in inbound {
                        switch frame.opcode {
                        case .text, .binary: received.yield(.text(String(buffer: frame.unmaskedData)))
                        case .ping: outgoing.yield(.pong(frame.unmaskedData))
                        case .connectionClose:
                            var data = frame.unmaskedData
                            let code = data.readInteger(as: UInt16.self)
                            outgoing.yield(.close(code))  // the answer to the server's close (ignored after our own)
                            outgoing.finish()
                            received.yield(.closed(code: code))
                            _ = try? await group.next()
                            group.cancelAll()
                            received.finish()
                            return
                        default: break
                        }
                    }
                    group.cancelAll()
                    received.finish(throwing: ChannelError.eof)
                }
            }
        } catch {
            received.finish(throwing: error)
        }
        outgoing.finish()
    }

    /// A client frame: final, masked (RFC 6455 §5.3).
    private static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }
}
#endif
