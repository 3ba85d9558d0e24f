import Hummingbird
import LatchkeyAPI

/// `GET /api/v1/health` (liveness, touches nothing) and `GET /api/v1/health/ready` (the database answers).
@available(LatchkeyServer 1.0, *)
struct HealthRoutes {
    let database: any LatchkeyDatabase
    static let version = "0.1.0"

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.get("health") { _, _ in
            try jsonResponse(HealthResponse(status: "ok", version: Self.version))
        }
        router.get("health/ready") { _, _ in
            do {
                try await self.database.ping()
            } catch {
                throw APIError.unavailable()
            }
            return try jsonResponse(ReadinessResponse(status: "ready", database: "ok"))
        }
    }
}
