import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
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
            guard context.upgrading else {
                throw APIError(
                    .upgradeRequired, .invalidRequest,
                    "This endpoint is a WebSocket: open a connection whose first request carries Upgrade: websocket and Connection: Upgrade.")
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
            `events.max-sockets-per-user` sockets (10): one more sends the oldest an `error` frame `too_many_sockets`, then closes \
            it with 4008. A client IP holds at most \
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
