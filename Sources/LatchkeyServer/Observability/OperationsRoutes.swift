import Foundation
import Hummingbird

/// `GET /metrics` (Prometheus text) and `GET /openapi.json` (the API description).
@available(LatchkeyServer 1.0, *)
struct OperationsRoutes {
    let metrics: LatchkeyMetrics

    static let openAPIDocument: ByteBuffer = {
        let url = Bundle.module.url(forResource: "openapi", withExtension: "json")
        let data = url.flatMap { try? Data(contentsOf: $0) } ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }()

    func add(to router: Router<LatchkeyRequestContext>) {
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: self.metrics.exposition())))
        }
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: Self.openAPIDocument))
        }
    }
}
