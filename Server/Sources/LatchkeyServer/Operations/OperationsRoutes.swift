import Foundation
import Hummingbird

/// `GET /metrics` (Prometheus text: on `metrics.port`, or on the API's port behind `Authorization: Bearer <metrics.token>`;
/// with neither it is not served) and `GET /openapi.json` (the API document, built from the operations the router serves).
struct OperationsRoutes {
    let metrics: LatchkeyMetrics
    let token: String?

    static let metricsOperation = APIOperation(
        .get, "/metrics", id: "getMetrics", tag: "Operations", summary: "Prometheus metrics",
        description:
            "Server metrics in the Prometheus text exposition format, served here only with `metrics.token` set, and then only with "
            + "`Authorization: Bearer <token>`; with `metrics.port` set it is served on that port instead, and with neither not at all (404).",
        outcomes: [.init(200, "Metrics in the Prometheus text exposition format."), .unauthorized("`metrics.token` is set and not sent.")])

    static let documentOperation = APIOperation(
        .get, "/openapi.json", id: "getOpenAPIDocument", tag: "Operations", summary: "This OpenAPI document",
        description: "This OpenAPI 3.0.3 document, built from the routes the server serves and the Codable types they answer with.",
        outcomes: [.init(200, "The OpenAPI document.")])

    /// Serves the metrics on `api`'s router (documented), or on `router` of their own port (not documented there).
    func addMetrics(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.metricsOperation) { request, _ in try self.exposition(request) }
    }

    func addMetrics(to router: Router<LatchkeyRequestContext>) {
        router.get("metrics") { request, _ in try self.exposition(request) }
    }

    /// Serves `document` (the bytes of every operation, this one included).
    func addDocument(_ document: @escaping @Sendable () -> ByteBuffer, to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.documentOperation) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: document()))
        }
    }

    private func exposition(_ request: Request) throws -> Response {
        if let token = self.token {
            guard let presented = request.bearerToken else { throw APIError.missingToken }
            guard Secret.constantTimeEquals(Secret.hash(presented), Secret.hash(token)) else {
                throw APIError.invalidToken("The metrics token is not valid.")
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: self.metrics.exposition())))
    }
}
