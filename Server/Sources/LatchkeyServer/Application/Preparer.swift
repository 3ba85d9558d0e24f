import Foundation
import Logging
import ServiceLifecycle

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
                try await self.services.prepare()  // marks the services ready
                if attempt > 1 { self.services.logger.notice("database ready", metadata: ["attempts": "\(attempt)"]) }
                break
            } catch StoreError.unavailable {
                let failure = try await self.services.database.transientFailure()
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
