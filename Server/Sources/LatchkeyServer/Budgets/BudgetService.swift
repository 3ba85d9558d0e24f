import Configuration
import Foundation
import LatchkeyAPI

/// Budget settings. Keys: `budgets.default-limit` (default 100), `budgets.period` (seconds, rolling, default
/// 2592000 = 30 days), `usage.service-key` (`LATCHKEY_USAGE_SERVICE_KEY`, secret): the key app backends present
/// to `POST /api/v1/usage`; without one that endpoint answers 403.
public struct BudgetPolicy: Sendable {
    public var defaultLimit: Double = 100
    public var period: TimeInterval = 30 * 86_400
    public var serviceKey: String?

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.defaultLimit = reader.double(forKey: "budgets.default-limit", default: defaults.defaultLimit)
        self.period = reader.double(forKey: "budgets.period", default: defaults.period)
        self.serviceKey = reader.string(forKey: "usage.service-key", isSecret: true)
    }

    /// `30d`, or `3600s` when the period is not whole days.
    var periodName: String {
        let seconds = Int(self.period)
        return seconds % 86_400 == 0 ? "\(seconds / 86_400)d" : "\(seconds)s"
    }
}

/// Budgets (Stori's "budget, usage"): every user has one, the default unless support set another; app backends
/// record usage against it; an exhausted budget refuses more.
public struct BudgetService: Sendable {
    let store: any BudgetStore
    let policy: BudgetPolicy
    let clock: any WallClock

    /// The user's budget now.
    public func budget(ofUser userID: String) async throws -> UserProfile.Budget {
        let (limit, used) = try await self.store.budgetState(ofUser: userID, since: self.periodStart)
        return self.budget(limit: limit, used: used)
    }

    /// The budget with `limit` (`nil`: the default) of which `used` was used since ``periodStart``.
    func budget(limit: Double?, used: Double) -> UserProfile.Budget {
        UserProfile.Budget(limit: limit ?? self.policy.defaultLimit, used: used, period: self.policy.periodName)
    }

    /// Sets the user's limit (support staff).
    public func setLimit(ofUser userID: String, to limit: Double) async throws -> UserProfile.Budget {
        guard try await self.store.setBudgetLimit(ofUser: userID, to: limit) else { throw ServiceError.notFound("No user with ID \(userID).") }
        return try await self.budget(ofUser: userID)
    }

    /// Records `amount` for the user once per `idempotencyKey`.
    public func recordUsage(userID: String, amount: Double, idempotencyKey: String) async throws -> UsageResponse {
        let limit = try await self.store.budgetLimit(ofUser: userID) ?? self.policy.defaultLimit
        let outcome = try await self.store.recordUsage(
            userID: userID, amount: amount, idempotencyKey: idempotencyKey, limit: limit, since: self.periodStart, at: self.clock.now())
        switch outcome {
        case .recorded, .duplicate:
            return UsageResponse(userID: userID, recorded: outcome == .recorded, budget: try await self.budget(ofUser: userID))
        case .exhausted: throw ServiceError.budgetExhausted
        case .unknownUser: throw ServiceError.notFound("No user with ID \(userID).")
        }
    }

    /// Whether `presented` is the configured service key (compared in constant time).
    func acceptsServiceKey(_ presented: String) -> Bool? {
        guard let key = self.policy.serviceKey, !key.isEmpty else { return nil }
        return Secret.constantTimeEquals(Secret.hash(presented), Secret.hash(key))
    }

    /// The start of the rolling period: usage after it counts.
    var periodStart: Date { self.clock.now().addingTimeInterval(-self.policy.period) }
}
