import Foundation
import LatchkeyAPI
import LatchkeyClient

/// Sends what a presigned URL stands for with URLSession, and no Latchkey credential: the URL carries its own signature.
enum PresignedTransfer {
    /// The store's 2xx answer to `presigned` with `body`. A refusal is ``LatchkeyError/rejected(_:)`` (exit 1), a failing
    /// store ``LatchkeyError/server(_:)`` and no answer ``LatchkeyError/offline(_:)`` (both exit 5).
    static func send(_ presigned: PresignedURL, body: Data? = nil) async throws -> TransportResponse {
        guard let url = URL(string: presigned.url) else {
            throw LatchkeyError.server(.init(code: .invalidResponse, message: "The server sent a presigned URL that cannot be read."))
        }
        let request = TransportRequest(method: presigned.method.rawValue, url: url, headers: presigned.headers, body: body)
        let response: TransportResponse
        do { response = try await URLSessionTransport().send(request) } catch {
            throw LatchkeyError.offline((error as? URLError)?.code ?? .unknown)
        }
        switch response.status {
        case 200..<300: return response
        case 500...: throw LatchkeyError.server(.init(status: response.status, message: Self.answer(to: request, response)))
        default: throw LatchkeyError.rejected(.init(status: response.status, message: Self.answer(to: request, response)))
        }
    }

    /// "The store answered the PUT with HTTP 403 (AccessDenied)." S3's error code only: its full answer may echo the request.
    static func answer(to request: TransportRequest, _ response: TransportResponse) -> String {
        let body = String(decoding: response.body, as: UTF8.self)
        var code = ""
        if let start = body.range(of: "<Code>"), let end = body.range(of: "</Code>", range: start.upperBound..<body.endIndex) {
            code = " (\(body[start.upperBound..<end.lowerBound]))"
        }
        return "The store answered the \(request.method) with HTTP \(response.status)\(code)."
    }
}
