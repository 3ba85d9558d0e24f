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

    package var isReady: Bool { self.state.withLock { if case .ready = $0 { true } else { false } } }

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

/// Prepares the services while the HTTP server already listens (`/api/v1/health/ready` answers 503 with the reason
/// meanwhile), trying again with backoff while the database is away, then runs the background services that need a
/// prepared database. A failure waiting cannot cure (a refused password, a missing database, TLS refused) ends the
/// server with a ``LatchkeyConfigurationError``; so does any other error of preparing.
struct Preparer: Service {
    let services: LatchkeyServices
    let then: [any Service]
    /// The first wait between attempts; it doubles up to ``longestWait``.
    var firstWait: Duration = .seconds(1)
    var longestWait: Duration = .seconds(30)

    func run() async throws {
        var wait = self.firstWait
        var attempt = 1
        while true {
            do {
                try await self.services.prepare()
                self.services.readiness.prepared()
                if attempt > 1 { self.services.logger.notice("database ready", metadata: ["attempts": "\(attempt)"]) }
                break
            } catch StoreError.unavailable {
                let failure = await self.services.database.diagnose()
                if let failure, !failure.isTransient { throw LatchkeyConfigurationError(description: failure.description) }
                self.services.readiness.failed(failure)
                self.services.logger.warning(
                    "database not ready; trying again",
                    metadata: [
                        "reason": "\(failure?.description ?? "no answer")", "attempt": "\(attempt)", "retry_in": "\(wait.components.seconds)s",
                    ])
            }
            let pause = wait
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch { return }
            if Task.isShuttingDownGracefully { return }
            wait = min(wait * 2, self.longestWait)
            attempt += 1
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for service in self.then { group.addTask { try await service.run() } }
            try await group.waitForAll()
        }
    }
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
