import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/usage`: an app backend, authenticated by the service key, records what a user spent.
@available(LatchkeyServer 1.0, *)
struct UsageRoutes {
    let budgets: BudgetService
    let maxBodySize: Int

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("usage") { request, _ in
            switch self.budgets.acceptsServiceKey(request.bearerToken ?? "") {
            case nil: throw APIError(.forbidden, .forbidden, "Usage recording is not configured on this server (usage.service-key).")
            case false?:
                guard request.bearerToken != nil else { throw APIError.missingToken }
                throw APIError.invalidToken("The service key is not valid.")
            case true?: break
            }
            var request = request
            let body = try await request.decodeJSON(as: UsageRequest.self, limit: self.maxBodySize)
            let userID = try canonicalUUID(body.userID, field: "user_id")
            guard body.amount > 0, body.amount.isFinite else { throw APIError.badRequest("Field \"amount\" must be a positive number.") }
            guard !body.idempotencyKey.isEmpty, body.idempotencyKey.utf8.count <= 200 else {
                throw APIError.badRequest("Field \"idempotency_key\" must be 1 to 200 bytes.")
            }
            return try jsonResponse(try await self.budgets.recordUsage(userID: userID, amount: body.amount, idempotencyKey: body.idempotencyKey))
        }
    }
}
