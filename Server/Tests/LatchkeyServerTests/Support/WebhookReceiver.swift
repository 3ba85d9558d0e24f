import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// A webhook endpoint on a real socket: verifies every delivery's Standard Webhooks signature on its own (HMAC-SHA256 of
/// `id.timestamp.body` with the secret's bytes), records it, and answers with the status the test sets.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let id: String
        let timestamp: Int
        let signatureValid: Bool
        let type: String
        let data: [String: String]
        let body: String
    }

    /// `whsec_` and base64 of 32 bytes.
    static let secret = "whsec_" + Data(repeating: 42, count: 32).base64EncodedString()
    private let state = Mutex<(deliveries: [Delivery], status: Int)>(([], 204))

    var deliveries: [Delivery] { self.state.withLock { $0.deliveries } }
    /// The status every later delivery is answered with.
    func answer(_ status: Int) { self.state.withLock { $0.status = status } }

    /// Runs `body` with the receiver's URL (`http://127.0.0.1:<port>/hook`) while it listens.
    func run<T: Sendable>(_ body: @escaping @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let bytes = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            let id = request.headers[HTTPField.Name("webhook-id")!] ?? ""
            let timestamp = Int(request.headers[HTTPField.Name("webhook-timestamp")!] ?? "") ?? 0
            let signature = request.headers[HTTPField.Name("webhook-signature")!] ?? ""
            var message = Data("\(id).\(timestamp).".utf8)
            message.append(bytes)
            let key = SymmetricKey(data: Data(base64Encoded: String(Self.secret.dropFirst("whsec_".count)))!)
            let expected = "v1," + Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
            let json = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any] ?? [:]
            let delivery = Delivery(
                id: id, timestamp: timestamp, signatureValid: signature.split(separator: " ").contains { $0 == expected },
                type: json["type"] as? String ?? "", data: json["data"] as? [String: String] ?? [:], body: String(decoding: bytes, as: UTF8.self))
            let status = self.state.withLock { state in
                state.deliveries.append(delivery)
                return state.status
            }
            return Response(status: HTTPResponse.Status(code: status))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("the webhook receiver has no port") }
            return try await body("http://127.0.0.1:\(port)/hook")
        }
    }
}
