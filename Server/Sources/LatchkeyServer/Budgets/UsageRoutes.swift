import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/usage`: an app backend, authenticated by the service key, records what a user spent.
struct UsageRoutes {
    let budgets: BudgetService

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.record) { request, context in
            switch self.budgets.acceptsServiceKey(request.bearerToken ?? "") {
            case nil: throw APIError(.forbidden, .forbidden, "Usage recording is not configured on this server (usage.service-key).")
            case false?:
                guard request.bearerToken != nil else { throw APIError.missingToken }
                throw APIError.invalidToken("The service key is not valid.")
            case true?: break
            }
            let body = try await request.decode(as: UsageRequest.self, context: context)
            let userID = try canonicalUUID(body.userID, field: "user_id")
            guard body.amount > 0, body.amount.isFinite else { throw APIError.badRequest("Field \"amount\" must be a positive number.") }
            guard !body.idempotencyKey.isEmpty, body.idempotencyKey.utf8.count <= 200 else {
                throw APIError.badRequest("Field \"idempotency_key\" must be 1 to 200 bytes.")
            }
            return Answer(try await self.budgets.recordUsage(userID: userID, amount: body.amount, idempotencyKey: body.idempotencyKey))
        }
    }

    static let record = APIOperation(
        .post, "/api/v1/usage", id: "recordUsage", tag: "Budgets", summary: "Record usage against a user's budget",
        description:
            "For app backends: records `amount` against the user's budget, authenticated by the service key (`usage.service-key`) as "
            + "`Authorization: Bearer <service key>`. The same `idempotency_key` twice counts once (`recorded: false`). When the budget of "
            + "the rolling period is used up the answer is 429 `budget_exhausted` and nothing is recorded. Without a configured service key "
            + "it answers 403.",
        security: .serviceKey, requestBody: UsageRequest.self,
        requestExample: #"{"user_id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "amount": 1.5, "idempotency_key": "job-42"}"#,
        outcomes: [
            .init(200, "The usage is counted (or was counted before under this key).", body: UsageResponse.self), .badRequest(),
            .unauthorized("The service key is missing or wrong."), .forbidden("Usage recording is not configured."),
            .notFound("No such user."), .tooLarge, .init(429, "The budget is used up for the period (`budget_exhausted`); nothing recorded."),
            .unavailable,
        ])
}
