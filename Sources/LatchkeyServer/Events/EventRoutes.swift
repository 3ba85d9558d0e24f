import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import LatchkeyAPI
import Logging
import NIOCore
import NIOHTTPTypes
import NIOWebSocket
import Synchronization

/// `GET /api/v1/events`: the session event stream, a WebSocket.
///
/// The upgrade request goes through the router like any other (request log, rate limit, token check, socket limits);
/// only when this route accepts it is the connection upgraded (see ``EventSocketServer``). Without `Upgrade: websocket`
/// the route answers 426 once the token passed.
@available(LatchkeyServer 1.0, *)
struct EventRoutes {
    let hub: EventHub
    let verifier: AccessTokenVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits
    let configuration: EventsConfiguration

    static let path = "/api/v1/events"

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.events,
            requirements: [
                .limited(by: self.limits.events, limiter: self.limiter, trustedProxies: self.limits.trustedProxies, counting: "upgrade requests"),
                RouteRequirement([QueryTokenAuthenticator(verifier: self.verifier), RequireToken(kinds: Set(TokenKind.allCases), refusal: "")]) {
                    operation in
                    operation.security = .bearer
                    operation.add(.unauthorized("No valid access token in `token` or `Authorization: Bearer`."))
                    if self.verifier.external != nil { operation.add(.providerKeysUnreachable) }
                },
            ]
        ) { request, context in
            _ = try context.requireIdentity()
            let client = context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)
            guard self.hub.count(client: client) < self.configuration.maxSocketsPerClient else {
                var error = APIError(
                    .tooManyRequests, .rateLimited,
                    "This client holds \(self.configuration.maxSocketsPerClient) event sockets already (events.max-sockets-per-client).")
                error.extraHeaders[.retryAfter] = "30"
                throw error
            }
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                throw APIError(.upgradeRequired, .invalidRequest, "This endpoint is a WebSocket: connect with Upgrade: websocket.")
            }
            // Read by EventSocketServer, which upgrades the connection.
            return Response(status: .ok)
        }
    }

    static let events = APIOperation(
        .get, path, id: "sessionEvents", tag: "Events", summary: "The session's events, over a WebSocket",
        description: """
            Upgrades to a WebSocket (RFC 6455) that tells the app, as it happens, that its session ended or its account changed. The \
            access token comes in `Authorization: Bearer` or, where a WebSocket client cannot set headers (browsers, Stori's MCP \
            socket), in the `token` query parameter; the request log never records the query. A missing, invalid, expired or revoked \
            token is refused before the upgrade: 401 with the error envelope and `WWW-Authenticate`.

            The server sends JSON text frames `{"type", "at", …}`: first `connected` (`user_id`, `session_id`, `expires_at`); then \
            `budget.changed` (`limit`, `used`, `remaining`) when usage is recorded or the limit set, `identity.linked` (`provider`), \
            `token.expiring` (`expires_at`) 60 seconds before the connecting token's `exp`, `reauthenticated` (`expires_at`), and \
            `error` (`error`, `message`) for a client frame it cannot use. A connection ends with `session.revoked` (`reason`: \
            `logout`, `logout_global`, `reuse_detected`, `deleted` or `admin`; after `user.deleted` when the account was deleted) and \
            close code 4001, within a second wherever the revocation happened (another process, the CLI); or with `token.expired` and \
            close 4002 when the token expired and no newer one came. The client carries on past its token's `exp` by sending \
            `{"type": "reauthenticate", "token": "<newer access token of the same user>"}` after each refresh.

            The server pings every `events.ping-interval` seconds (30) and drops a client that stops answering. A user holds at most \
            `events.max-sockets-per-user` sockets (10): one more closes the oldest with 4008. A client IP holds at most \
            `events.max-sockets-per-client` (100; more get 429).
            """,
        parameters: [
            .init(
                "token", in: .query, required: false,
                "The access token, for WebSocket clients that cannot send `Authorization: Bearer`; prefer the header where you can."),
            .init("Upgrade", in: .header, required: false, "`websocket`."),
        ],
        outcomes: [
            .init(101, "Switching Protocols: the event stream follows."),
            .init(426, "Not a WebSocket upgrade (the token was valid)."),
            .init(429, "This client holds `events.max-sockets-per-client` sockets already; see `Retry-After`.", headers: ["Retry-After"]),
            .unavailable,
        ])
}

/// Takes the access token from `Authorization: Bearer` or, failing that, the `token` query parameter, and verifies it as
/// ``BearerAuthenticator`` does.
@available(LatchkeyServer 1.0, *)
struct QueryTokenAuthenticator: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let verifier: AccessTokenVerifier

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = Self.token(of: request) else { return try await next(request, context) }
        var context = context
        context.identity = try await self.verifier.verify(token)
        return try await next(request, context)
    }

    /// The bearer, else the one `token` query parameter (percent-decoded).
    static func token(of request: Request) -> String? {
        if let bearer = request.bearerToken { return bearer }
        let values = request.uri.queryParameters.getAll("token")
        guard values.count == 1, let value = values.first, !value.isEmpty else { return nil }
        return String(value)
    }
}

/// The HTTP/1.1 server with WebSocket upgrades of `GET /api/v1/events`.
///
/// Hummingbird asks `shouldUpgrade` before answering an upgrade request; this answers it with the router itself, so the
/// upgrade request gets the same logging, limits and token checks as any other. When the router does not accept the
/// upgrade, Hummingbird would answer a bare 400; ``RefusedUpgradeWriter`` writes the router's own answer instead (the
/// 401 envelope with `WWW-Authenticate`, a 429, a 404…).
@available(LatchkeyServer 1.0, *)
enum EventSocketServer {
    static func builder(
        responder: some HTTPResponder<LatchkeyRequestContext>, hub: EventHub, trustedProxies: Set<String>, idleTimeout: TimeInterval
    ) -> HTTPServerBuilder {
        let refusals = RefusedUpgrades()
        let ping = hub.configuration.pingInterval
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                additionalChannelHandlers: [RefusedUpgradeWriter(refusals: refusals)],
                idleTimeout: .nanoseconds(Int64(idleTimeout * 1_000_000_000))),
            ws: .init(
                maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .nanoseconds(Int64(ping * 1_000_000_000))), closeTimeout: .seconds(10),
                validateUTF8: true))
        return .http1WebSocketUpgrade(configuration: configuration) { head, channel, logger in
            let request = Request(head: head, body: .init(buffer: ByteBuffer()))
            let context = LatchkeyRequestContext(source: .init(channel: channel, logger: logger))
            let response = try await responder.respond(to: request, context: context)
            guard response.status == .ok, request.uri.path == EventRoutes.path, let token = QueryTokenAuthenticator.token(of: request),
                let verified = try? await hub.verifier.verify(token)
            else {
                await refusals.keep(response, for: channel)
                return .dontUpgrade
            }
            let client = context.limitKey(of: request, trustedProxies: trustedProxies)
            return .upgrade([:]) { inbound, outbound, _ in
                await EventSocket.serve(inbound: inbound, outbound: outbound, hub: hub, token: token, verified: verified, client: client)
            }
        }
    }
}

/// One event socket: frames from the hub out, the client's frames in.
@available(LatchkeyServer 1.0, *)
enum EventSocket {
    static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, hub: EventHub, token: String, verified: VerifiedToken, client: String
    ) async {
        let (id, outgoing) = hub.register(token: token, verified: verified, client: client)
        defer { hub.unregister(id) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await item in outgoing {
                    switch item {
                    case .frame(let frame):
                        guard let data = try? encoder.encode(frame) else { continue }
                        do { try await outbound.write(.text(String(decoding: data, as: UTF8.self))) } catch { return }
                    case .close(let code, let reason):
                        try? await outbound.close(.unknown(code), reason: reason)
                        return
                    }
                }
            }
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: 16 * 1024) {
                        switch message {
                        case .text(let text): await hub.received(text, on: id)
                        case .binary: hub.reply(id, error: "bad_frame", "Frames are JSON text, not binary.")
                        }
                    }
                } catch {
                    // A frame over 16 KiB or a broken connection: the socket ends.
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Answers of the router to upgrade requests it refused, until the connection writes them.
@available(LatchkeyServer 1.0, *)
final class RefusedUpgrades: Sendable {
    struct Refusal: Sendable {
        var head: HTTPResponse
        var body: ByteBuffer
    }

    private let refusals = Mutex<[ObjectIdentifier: Refusal]>([:])

    func keep(_ response: Response, for channel: any Channel) async {
        let collector = BodyCollector()
        try? await response.body.write(CollectingWriter(collector: collector))
        var head = response.head
        head.headerFields[.contentLength] = String(collector.buffer.readableBytes)
        head.headerFields[.connection] = "close"
        let key = ObjectIdentifier(channel)
        self.refusals.withLock { $0[key] = Refusal(head: head, body: collector.buffer) }
        channel.closeFuture.whenComplete { _ in self.refusals.withLock { _ = $0.removeValue(forKey: key) } }
    }

    func take(for channel: any Channel) -> Refusal? {
        self.refusals.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
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

/// Writes the router's answer in place of the bare 400 Hummingbird sends for a refused upgrade; on every other
/// connection it removes itself at once.
@available(LatchkeyServer 1.0, *)
final class RefusedUpgradeWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let refusals: RefusedUpgrades
    private var refusal: RefusedUpgrades.Refusal?

    init(refusals: RefusedUpgrades) { self.refusals = refusals }

    func handlerAdded(context: ChannelHandlerContext) {
        self.refusal = self.refusals.take(for: context.channel)
        if self.refusal == nil { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let refusal = self.refusal else { return context.write(data, promise: promise) }
        switch self.unwrapOutboundIn(data) {
        case .head: context.write(self.wrapOutboundOut(.head(refusal.head)), promise: promise)
        case .body: promise?.succeed()
        case .end(let trailers):
            if refusal.body.readableBytes > 0 { context.write(self.wrapOutboundOut(.body(refusal.body)), promise: nil) }
            context.write(self.wrapOutboundOut(.end(trailers)), promise: promise)
            self.refusal = nil
        }
    }
}
