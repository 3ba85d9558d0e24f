import Foundation
import LatchkeyClient

/// A transport over URLSession that can lose the answer to a request after the server has handled it (a timeout, a
/// suspended app): the request reaches the server, the app sees no response.
final class AnswerLosingTransport: HTTPTransport, @unchecked Sendable {
    private let inner = URLSessionTransport()
    private let lock = NSLock()
    private var pathToLose: String?
    private var lost: [TransportResponse] = []

    /// The next answer to a request to `path` is lost.
    func loseNextAnswer(to path: String) { self.lock.withLock { self.pathToLose = path } }
    /// The answers that were lost, in order.
    var lostAnswers: [TransportResponse] { self.lock.withLock { self.lost } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await self.inner.send(request)
        let losing = self.lock.withLock { () -> Bool in
            guard self.pathToLose == request.url.path else { return false }
            self.pathToLose = nil
            self.lost.append(response)
            return true
        }
        if losing { throw URLError(.timedOut) }
        return response
    }
}
