import Configuration
import Foundation

/// How `GET /api/v1/authorize` treats one route of the app behind a proxy.
///
/// Written in configuration as `"<METHOD or *> <path prefix> <auth> [<meter>] [token=query]"`, e.g.
/// `"POST /api/edit bearer actions"`, `"GET /assets device"` or `"GET /api/v1/mcp bearer token=query"` (key
/// `authorize.routes`, comma-separated). The first rule whose method and path prefix match decides; a request no rule
/// matches is refused (403). Prefixes match whole segments of the normalised path (``ForwardedPath``): `/api/edit`
/// covers `/api/edit/42`, never `/api/editor`; and `/API/Edit/42` too, unless `authorize.case-sensitive` says the app
/// behind the proxy routes case for case.
public struct AuthorizationRule: Sendable, Equatable {
    /// Who may pass.
    public enum Auth: String, Sendable {
        /// Anyone.
        case `public`
        /// A device UUID in `X-Device-ID`, no token (Stori's asset endpoints).
        case device
        /// Any valid Latchkey token: a session, an access code or a guest token (guests also send `X-Device-ID`).
        case bearer
        /// A valid token that is not a guest token.
        case user
    }

    public var method: String
    public var pathPrefix: String
    public var auth: Auth
    /// The configured meter counting admitted requests, if any.
    public var meter: String?
    /// Whether a `bearer` or `user` rule also takes the token from the original URI's `token` query parameter when
    /// the request has no `Authorization` header (`token=query`): for WebSocket clients that cannot set headers.
    /// Off by default, since a query lands in access logs.
    public var acceptsQueryToken: Bool

    public init(method: String, pathPrefix: String, auth: Auth, meter: String? = nil, acceptsQueryToken: Bool = false) {
        self.method = method.uppercased()
        self.pathPrefix = ForwardedPath.normalize(pathPrefix) ?? pathPrefix
        self.auth = auth
        self.meter = meter
        self.acceptsQueryToken = acceptsQueryToken
    }

    /// Parses `"<METHOD> <path prefix> <auth> [<meter>] [token=query]"` (the last two in either order); nil when
    /// malformed, or when `token=query` is on a rule that reads no token.
    public init?(_ text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count >= 3, ForwardedPath.normalize(words[1]) != nil, let auth = Auth(rawValue: words[2]) else { return nil }
        var meter: String?
        var acceptsQueryToken = false
        for word in words.dropFirst(3) {
            if word == "token=query" && !acceptsQueryToken {
                acceptsQueryToken = true
            } else if !word.contains("=") && meter == nil {
                meter = word
            } else {
                return nil
            }
        }
        guard !acceptsQueryToken || auth == .bearer || auth == .user else { return nil }
        self.init(method: words[0], pathPrefix: words[1], auth: auth, meter: meter, acceptsQueryToken: acceptsQueryToken)
    }

    /// Whether the rule covers `method` on `path` (normalised); letters of the path in either case unless `caseSensitive`.
    func matches(method: String, path: String, caseSensitive: Bool = true) -> Bool {
        (self.method == "*" || self.method == method.uppercased())
            && ForwardedPath.covers(prefix: self.pathPrefix, path: path, caseSensitive: caseSensitive)
    }
}

/// Which proxy asks `GET /api/v1/authorize`, and so which headers name the original request (`authorize.proxy`).
///
/// Only that pair is read, and only from the addresses in `limits.trusted-proxies`: a client could send the other
/// pair itself (Traefik forwards client headers by default).
public enum ForwardAuthProxy: String, Sendable {
    /// `X-Original-Method` and `X-Original-URI`, as the nginx `auth_request` configuration in the README sets them
    /// (Envoy and Caddy can be configured to send them too).
    case nginx
    /// `X-Forwarded-Method` and `X-Forwarded-Uri`, which Traefik's forwardAuth sets.
    case traefik

    var methodHeader: String { self == .nginx ? "X-Original-Method" : "X-Forwarded-Method" }
    var uriHeader: String { self == .nginx ? "X-Original-URI" : "X-Forwarded-Uri" }
}
