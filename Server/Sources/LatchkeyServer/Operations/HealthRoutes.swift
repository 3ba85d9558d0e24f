import Hummingbird
import LatchkeyAPI

/// `GET /api/v1/health` (liveness, touches nothing) and `GET /api/v1/health/ready` (the database answers).
struct HealthRoutes {
    let database: any LatchkeyDatabase
    let readiness: Readiness
    static let version = LatchkeyVersion.current

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            APIOperation(
                .get, "/api/v1/health", id: "getHealth", tag: "Health", summary: "Liveness and version",
                description: "Liveness probe. Touches nothing (not even the database) and reports the server version.",
                outcomes: [.init(200, "The process is alive.", body: HealthResponse.self)])
        ) { _, _ in Answer(HealthResponse(status: "ok", version: Self.version)) }
        api.add(
            APIOperation(
                .get, "/api/v1/health/ready", id: "getReadiness", tag: "Health", summary: "Readiness (the database answers)",
                description: """
                    Readiness probe: 200 when the database answers a trivial query, 503 `service_unavailable` when it does not or \
                    the server is still preparing it; the message says what failed (connection refused, no answer in time, TLS \
                    refused, authentication failed, no such database), never a password.
                    """,
                outcomes: [.init(200, "The server and its database are ready.", body: ReadinessResponse.self), .unavailable])
        ) { _, _ in
            if let reason = self.readiness.notReadyReason { throw APIError(.serviceUnavailable, .serviceUnavailable, reason) }
            do {
                try await self.database.ping()
            } catch {
                guard let failure = await self.database.diagnose() else { throw APIError.unavailable() }
                throw APIError(.serviceUnavailable, .serviceUnavailable, "The database is not answering: \(failure).")
            }
            return Answer(ReadinessResponse(status: "ready", database: "ok"))
        }
    }
}
