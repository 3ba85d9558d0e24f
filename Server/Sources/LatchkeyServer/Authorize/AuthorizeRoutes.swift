import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// `GET /api/v1/authorize`: forward authentication for nginx `auth_request`, Traefik forwardAuth or Envoy.
///
/// The proxy (one of `limits.trusted-proxies`; anyone else gets 403) sends the original method and URI in the
/// headers of its kind (``ForwardAuthProxy``: `X-Original-Method`/`X-Original-URI` for nginx, Traefik's
/// `X-Forwarded-Method`/`X-Forwarded-Uri`), each exactly once, with the client's `Authorization` and `X-Device-ID`
/// (or, for a rule with `token=query`, the token in the original URI's `token` parameter).
/// The path is normalised (``ForwardedPath``) and the first matching ``AuthorizationRule`` decides: 200 with
/// `X-Latchkey-User-Id` (never for a device rule or a guest: their ID is a device's, not a user's),
/// `X-Latchkey-Device-Id` and `X-Latchkey-Kind` for the upstream, or 401/400/403/429 with the envelope. A rule's
/// meter counts every admitted request (a proxy cannot tell this endpoint how the upstream answered), unlike
/// ``MeterMiddleware``, which counts only 2xx.
struct AuthorizeRoutes {
    let rules: [AuthorizationRule]
    let meters: [String: Meter]
    let verifier: AccessTokenVerifier
    let limiter: RateLimiter
    let trustedProxies: Set<String>
    let proxy: ForwardAuthProxy
    /// `authorize.case-sensitive`: the app behind the proxy routes case for case.
    let caseSensitive: Bool
    /// `limits.guest-per-network`: a guest's admitted actions on metered rules per client network, across device IDs.
    let guestPerNetwork: RateLimitPolicy
    /// `app-attest.unattested-guest-limit` where the policy applies it: metered guests without `att` are held to it.
    var unattestedGuestLimit: Int? = nil

    static let userIDHeader = HTTPField.Name("X-Latchkey-User-Id")!
    static let deviceIDHeader = HTTPField.Name("X-Latchkey-Device-Id")!
    static let kindHeader = HTTPField.Name("X-Latchkey-Kind")!
    static let attestedHeader = HTTPField.Name(LatchkeyHeader.attested)!

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        // Every method, for proxies that forward the original one (Envoy's ext_authz does).
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete, .head] {
            var operation = Self.operation(method)
            if self.verifier.external != nil { operation.add(.providerKeysUnreachable) }
            api.add(operation) { request, context in try await self.authorize(request, context: context) }
        }
    }

    static func operation(_ method: HTTPRequest.Method) -> APIOperation {
        APIOperation(
            method, "/api/v1/authorize", id: "authorize" + method.rawValue.capitalized, tag: "Proxy", summary: "Forward authentication for a proxy",
            description: """
                For nginx `auth_request`, Traefik forwardAuth or Envoy in front of an app. Answers only the proxies in \
                `limits.trusted-proxies` (403 otherwise) and reads only the header pair of `authorize.proxy` (`nginx`: \
                `X-Original-Method`/`X-Original-URI`; `traefik`: `X-Forwarded-Method`/`X-Forwarded-Uri`), each exactly once (400 \
                otherwise), with the client's `Authorization` and `X-Device-ID`. The path is normalised (unreserved escapes \
                decoded, `//`, `.` and `..` resolved, `;` parameters cut; an encoded slash or backslash, `%2F` or `%5C`, is 400) \
                and the first rule (`authorize.routes`) whose method and path prefix match on whole segments (letters in either \
                case unless `authorize.case-sensitive`) decides: `public` lets anyone pass, `device` needs `X-Device-ID` only, \
                `bearer` any valid token (guests also `X-Device-ID`), `user` a token that is not a guest's. A `bearer` or \
                `user` rule written with `token=query` (for WebSocket clients, which cannot set headers) also takes the token \
                from the original URI's `token` query parameter, percent-decoded, when there is no `Authorization` (400 when \
                it is repeated or the query is unreadable); other rules never read the query. 200 carries \
                `X-Latchkey-Kind` and `X-Latchkey-User-Id` (a signed-in user) or `X-Latchkey-Device-Id` (a device rule or a \
                guest: never presented as a user), and `X-Latchkey-Attested: true` for the token of a device attested with                 App Attest (claim `att`); 429 when the rule's meter is used up (it counts every admitted request; a guest                 without `att` is held to `app-attest.unattested-guest-limit` where the policy sets one).
                """,
            parameters: [
                .init("X-Original-Method", in: .header, required: false, "The original request's method (nginx)."),
                .init("X-Original-URI", in: .header, required: false, "The original request's path and query (nginx `$request_uri`)."),
                .init("X-Forwarded-Method", in: .header, required: false, "The original request's method (Traefik)."),
                .init("X-Forwarded-Uri", in: .header, required: false, "The original request's path and query (Traefik)."),
                .init("X-Device-ID", in: .header, required: false, "The device UUID, for device rules and metered guests."),
            ],
            outcomes: [
                .init(
                    200, "The request may pass; identity headers for the upstream (and the meter's, when the rule has one).",
                    headers: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Latchkey-Attested"]),
                .badRequest(
                    "The proxy's headers are missing or repeated, the path is unreadable (an encoded slash or backslash, a malformed "
                        + "escape), or a `token=query` rule met a repeated `token` parameter."),
                .unauthorized(), .forbidden("Not a trusted proxy, no rule covers the route, or a guest met a `user` rule."),
                .init(
                    429, "The rule's meter is used up, or a guest's client network its `limits.guest-per-network`; see `Retry-After`.",
                    headers: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]),
                .unavailable,
            ])
    }

    func authorize(_ request: Request, context: LatchkeyRequestContext) async throws -> Response {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        guard self.trustedProxies.contains(peer) else {
            throw APIError(
                .forbidden, .forbidden,
                "Forward authentication answers only the proxies listed in limits.trusted-proxies; this peer is not one.")
        }
        let method = try self.original(self.proxy.methodHeader, of: request)
        let uri = try self.original(self.proxy.uriHeader, of: request)
        guard let path = ForwardedPath.normalize(uri) else {
            throw APIError.badRequest(
                "\(self.proxy.uriHeader) is not a readable path (an encoded slash, backslash or control character, or a malformed escape).",
                code: .invalidHeader)
        }
        guard let rule = self.rules.first(where: { $0.matches(method: method, path: path, caseSensitive: self.caseSensitive) }) else {
            throw APIError(.forbidden, .forbidden, "No authorization rule covers \(method) \(path).")
        }
        var answer = Response(status: .ok)
        let key: String
        let guest: Bool
        var attested = false
        switch rule.auth {
        case .public:
            return answer
        case .device:
            let deviceID = try request.requireDeviceID()
            answer.headers[Self.deviceIDHeader] = deviceID
            answer.headers[Self.kindHeader] = "device"
            (key, guest) = (deviceID, false)
        case .bearer, .user:
            let token = try await self.verifier.verify(try self.presentedToken(of: request, uri: uri, rule: rule))
            guest = token.kind == .guest
            if guest && rule.auth == .user {
                throw APIError(.forbidden, .forbidden, "This route needs a signed-in user, not a guest.")
            }
            if !guest { answer.headers[Self.userIDHeader] = token.userID }
            if let deviceID = token.deviceID { answer.headers[Self.deviceIDHeader] = deviceID }
            answer.headers[Self.kindHeader] = token.kind.rawValue
            if token.claims.attested == true { answer.headers[Self.attestedHeader] = "true" }
            attested = token.claims.attested == true
            key = guest ? try meterKey(guest: token, request: request, context: context, trustedProxies: self.trustedProxies) : token.userID
        }
        guard let name = rule.meter, let meter = self.meters[name] else { return answer }
        var policy = meter.policy(guest: guest, attested: attested, unattestedGuestLimit: self.unattestedGuestLimit)
        policy.countsOnlySuccesses = false
        let network = guest ? (self.guestPerNetwork, context.limitKey(of: request, trustedProxies: self.trustedProxies)) : nil
        return try await self.limiter.metering(policy, key: key, guestNetwork: network) { answer }
    }

    /// The token a `bearer` or `user` rule checks: `Authorization: Bearer`, or, when the request has no `Authorization`
    /// and the rule says `token=query`, the one `token` parameter of the original URI. Never put in a message: the URI
    /// travels in a header, and the request log has only this endpoint's path.
    private func presentedToken(of request: Request, uri: String, rule: AuthorizationRule) throws -> String {
        if let bearer = request.bearerToken { return bearer }
        guard rule.acceptsQueryToken, request.headers[.authorization] == nil else { throw APIError.missingToken }
        guard let values = ForwardedQuery.values(of: "token", in: uri) else {
            throw APIError.badRequest("The query of \(self.proxy.uriHeader) is not readable.", code: .invalidHeader)
        }
        guard values.count < 2 else { throw APIError.badRequest("The token query parameter was sent more than once.", code: .invalidHeader) }
        guard let token = values.first, !token.isEmpty else {
            var error = APIError(
                .unauthorized, .invalidToken, "This route needs an access token: send Authorization: Bearer <token> or the token query parameter.")
            error.credentialPresented = false
            throw error
        }
        return token
    }

    /// The one value of the proxy's header `name`; 400 when it is missing or sent more than once (a client's own copy
    /// joined to the proxy's must not decide which path is checked).
    private func original(_ name: String, of request: Request) throws -> String {
        let values = request.headers[values: HTTPField.Name(name)!]
        guard values.count == 1, let value = values.first, !value.isEmpty else {
            throw APIError.badRequest(
                values.count > 1
                    ? "\(name) was sent more than once." : "Send the original request as \(self.proxy.methodHeader) and \(self.proxy.uriHeader).",
                code: .invalidHeader)
        }
        return value
    }
}
