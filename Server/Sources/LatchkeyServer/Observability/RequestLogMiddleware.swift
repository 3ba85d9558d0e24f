import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging

/// One structured log line and one metrics sample per request, and `X-Request-ID` on every response.
///
/// Logs the method, the path without its query (a WebSocket URL may carry `?token=`), the status,
/// the duration and the request ID — never a header value or a body.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: LatchkeyMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        response.headers[HTTPField.Name(LatchkeyHeader.requestID)!] = context.id
        self.metrics.requestFinished(route: route, method: request.method.rawValue, status: response.status.code, duration: duration)
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "route": "\(route)",
                "status": "\(response.status.code)", "duration_ms": "\(Double(duration.nanoseconds) / 1_000_000)",
            ])
        return response
    }
}
