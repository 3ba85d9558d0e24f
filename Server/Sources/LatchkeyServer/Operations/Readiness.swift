import Foundation
import Hummingbird
import LatchkeyAPI
import Logging
import ServiceLifecycle
import Synchronization

/// Whether the services are prepared (migrations applied, keys loaded) and, while they are not, what the last attempt
/// found: what `GET /api/v1/health/ready` says.
package final class Readiness: Sendable {
    private enum State {
        case preparing(DatabaseFailure?)
        case ready
    }

    private let state = Mutex<State>(.preparing(nil))

    package init() {}

    /// Why the server is not ready, while it is not: the last attempt's failure, or that preparing is under way.
    package var notReadyReason: String? {
        self.state.withLock { state in
            switch state {
            case .ready: nil
            case .preparing(let failure): failure.map { "The database is not ready: \($0)." } ?? "The server is preparing its database."
            }
        }
    }

    func prepared() { self.state.withLock { $0 = .ready } }

    func failed(_ failure: DatabaseFailure?) { self.state.withLock { $0 = .preparing(failure) } }
}

/// Until the services are prepared, every request but the health probes, metrics and the API document is answered
/// 503 `service_unavailable` with the reason.
struct ReadinessGate<Context: RequestContext>: RouterMiddleware {
    let readiness: Readiness

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let reason = self.readiness.notReadyReason {
            let path = request.uri.path
            if !(path.hasPrefix("/api/v1/health") || path == "/metrics" || path == "/openapi.json") {
                throw APIError(.serviceUnavailable, .serviceUnavailable, reason)
            }
        }
        return try await next(request, context)
    }
}
