import Foundation
import Hummingbird

/// `GET /metrics` (Prometheus text; behind `Authorization: Bearer <metrics.token>` when one is set) and
/// `GET /openapi.json` (the API description).
@available(LatchkeyServer 1.0, *)
struct OperationsRoutes {
    let metrics: LatchkeyMetrics
    let token: String?

    static let openAPIDocument: ByteBuffer = {
        let url = Bundle.module.url(forResource: "openapi", withExtension: "json")
        let data = url.flatMap { try? Data(contentsOf: $0) } ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }()

    func addMetrics(to router: Router<LatchkeyRequestContext>) {
        router.get("metrics") { request, _ in
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

    func addDocument(to router: Router<LatchkeyRequestContext>) {
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: Self.openAPIDocument))
        }
    }
}
