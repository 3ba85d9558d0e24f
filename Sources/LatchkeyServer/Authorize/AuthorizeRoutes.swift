import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// `GET /api/v1/authorize`: forward authentication for nginx `auth_request`, Traefik forwardAuth or Envoy.
///
/// The proxy sends the original method and URI (`X-Original-Method`/`X-Original-URI`, or Traefik's
/// `X-Forwarded-Method`/`X-Forwarded-Uri`) with the client's `Authorization` and `X-Device-ID`. The first
/// matching ``AuthorizationRule`` decides: 200 with `X-Latchkey-User-Id` and `X-Latchkey-Kind` for the
/// upstream, or 401/400/403/429 with the envelope. A rule's meter counts every admitted request (a proxy
/// cannot tell this endpoint how the upstream answered), unlike ``MeterMiddleware``, which counts only 2xx.
@available(LatchkeyServer 1.0, *)
struct AuthorizeRoutes {
    let rules: [AuthorizationRule]
    let meters: [String: Meter]
    let verifier: AccessTokenVerifier
    let limiter: RateLimiter
    let trustedProxies: Set<String>

    static let userIDHeader = HTTPField.Name("X-Latchkey-User-Id")!
    static let kindHeader = HTTPField.Name("X-Latchkey-Kind")!

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete, .head] {
            router.on("authorize", method: method) { request, context in try await self.authorize(request, context: context) }
        }
    }

    func authorize(_ request: Request, context: LatchkeyRequestContext) async throws -> Response {
        let method = request.headers[.init("X-Original-Method")!] ?? request.headers[.init("X-Forwarded-Method")!]
        let uri = request.headers[.init("X-Original-URI")!] ?? request.headers[.init("X-Forwarded-Uri")!]
        guard let method, let uri else {
            throw APIError.badRequest("Send the original request as X-Original-Method and X-Original-URI.", code: .invalidHeader)
        }
        let path = String(uri.prefix { $0 != "?" })
        guard let rule = self.rules.first(where: { $0.matches(method: method, path: path) }) else {
            throw APIError(.forbidden, .forbidden, "No authorization rule covers \(method) \(path).")
        }
        var answer = Response(status: .ok)
        let key: String
        switch rule.auth {
        case .public:
            return answer
        case .device:
            let deviceID = try request.requireDeviceID()
            answer.headers[Self.userIDHeader] = deviceID
            answer.headers[Self.kindHeader] = "device"
            key = deviceID
        case .bearer, .user:
            guard let bearer = request.bearerToken else { throw APIError.missingToken }
            let token = try await self.verifier.verify(bearer)
            if token.kind == .guest && rule.auth == .user {
                throw APIError(.forbidden, .forbidden, "This route needs a signed-in user, not a guest.")
            }
            answer.headers[Self.userIDHeader] = token.userID
            answer.headers[Self.kindHeader] = token.kind.rawValue
            key =
                token.kind == .guest
                ? try meterKey(guest: token, request: request, context: context, trustedProxies: self.trustedProxies) : token.userID
        }
        guard let name = rule.meter, let meter = self.meters[name] else { return answer }
        var policy = meter.policy(guest: answer.headers[Self.kindHeader] == TokenKind.guest.rawValue)
        policy.countsOnlySuccesses = false
        return try await self.limiter.limiting(policy, key: key) { answer }
    }
}

/// The meter key of a guest request: SHA-256(client IP + device ID), so a new guest token keeps the device's count.
///
/// The `X-Device-ID` header must name the device the guest token was issued to: otherwise a guest could escape
/// its meter by sending a new device ID with every request.
@available(LatchkeyServer 1.0, *)
func meterKey(guest token: VerifiedToken, request: Request, context: LatchkeyRequestContext, trustedProxies: Set<String>) throws -> String {
    let deviceID = try request.requireDeviceID()
    guard deviceID == token.deviceID else {
        throw APIError(.forbidden, .forbidden, "The X-Device-ID header does not name the device of this guest token.")
    }
    let material = context.clientIP(of: request, trustedProxies: trustedProxies) + " " + deviceID
    return SHA256.hash(data: Data(material.utf8)).hexString
}
