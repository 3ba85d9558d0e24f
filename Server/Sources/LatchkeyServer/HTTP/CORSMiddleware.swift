import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// Cross-origin answers for the browsers of `http.cors.allowed-origins` (exact origins such as `https://app.example.com`;
/// none by default, so no CORS header is ever sent).
///
/// A request whose `Origin` is allowed gets `Access-Control-Allow-Origin` naming that origin (never `*`) and the
/// headers a client reads exposed; a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here with
/// 204, the methods and headers the API takes, and `Access-Control-Max-Age`. Credentials are never allowed: the API
/// authenticates with Bearer tokens, not cookies. Any other origin gets no CORS header, so the browser keeps the
/// answer from the page. The console (`/admin`) never sends CORS headers.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedOrigins: Set<String>

    static var allowedMethods: String { "GET, POST, PUT, PATCH, DELETE" }
    static var allowedHeaders: String { "Authorization, Content-Type, DPoP, \(LatchkeyHeader.deviceID), \(LatchkeyHeader.requestID)" }
    static var exposedHeaders: String {
        [
            "WWW-Authenticate", "DPoP-Nonce", LatchkeyHeader.requestID, LatchkeyHeader.retryAfter, LatchkeyHeader.rateLimitLimit,
            LatchkeyHeader.rateLimitRemaining, LatchkeyHeader.rateLimitReset,
        ].joined(separator: ", ")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard !self.allowedOrigins.isEmpty, path != "/admin", !path.hasPrefix("/admin/") else { return try await next(request, context) }
        guard let origin = request.headers[.origin], self.allowedOrigins.contains(origin) else {
            var response = try await next(request, context)
            if request.headers[.origin] != nil { response.headers[.vary] = "Origin" }
            return response
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var response = Response(status: .noContent)
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlAllowMethods] = Self.allowedMethods
            response.headers[.accessControlAllowHeaders] = Self.allowedHeaders
            response.headers[.accessControlMaxAge] = "600"
            response.headers[.vary] = "Origin"
            return response
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        response.headers[.vary] = "Origin"
        return response
    }
}
