import Foundation
import SQLKit

/// What happened to one usage record.
package enum UsageOutcome: Sendable, Equatable {
    case recorded
    /// The idempotency key was recorded before; nothing was added.
    case duplicate
    /// The budget was used up before this record; nothing was added.
    case exhausted
    case unknownUser
}

/// Budgets and the usage recorded against them.
package protocol BudgetStore: Sendable {
    /// The user's own limit, or nil when the default applies.
    func budgetLimit(ofUser userID: String) async throws -> Double?
    func setBudgetLimit(ofUser userID: String, to limit: Double) async throws -> Bool
    /// The user's own limit (nil: the default applies) and the usage recorded since `start`, read at once.
    func budgetState(ofUser userID: String, since start: Date) async throws -> (limit: Double?, used: Double)
    /// Records `amount` unless the key was seen or the budget (`limit`, over usage since `start`) is used up; atomic.
    func recordUsage(
        userID: String, amount: Double, idempotencyKey: String, limit: Double, since start: Date, at time: Date
    )
        async throws -> UsageOutcome
}

extension SQLLatchkeyStore: BudgetStore {
    package func budgetLimit(ofUser userID: String) async throws -> Double? {
        try await self.database.read { sql in
            try await sql.raw("SELECT budget_limit FROM budgets WHERE user_id = \(bind: userID)").first()?
                .decode(column: "budget_limit", as: Double.self)
        }
    }

    package func setBudgetLimit(ofUser userID: String, to limit: Double) async throws -> Bool {
        defer { self.changes.publish([.userChanged(userID)]) }
        do {
            try await self.changing { sql, changes in
                try await sql.raw(
                    """
                    INSERT INTO budgets (user_id, budget_limit) VALUES (\(bind: userID), \(bind: limit))
                    ON CONFLICT (user_id) DO UPDATE SET budget_limit = \(bind: limit)
                    """
                ).run()
                changes.note(.budgetChanged(userID))
            }
            return true
        } catch StoreError.conflict {
            return false  // no such user
        }
    }

    package func budgetState(ofUser userID: String, since start: Date) async throws -> (limit: Double?, used: Double) {
        try await self.database.read { sql in
            let limit = try await sql.raw("SELECT budget_limit FROM budgets WHERE user_id = \(bind: userID)").first()?
                .decode(column: "budget_limit", as: Double.self)
            return (limit, try await Self.usage(ofUser: userID, since: start, on: sql))
        }
    }

    package func recordUsage(
        userID: String, amount: Double, idempotencyKey: String, limit: Double, since start: Date, at time: Date
    )
        async throws -> UsageOutcome
    {
        defer { self.changes.publish([.userChanged(userID)]) }
        return try await self.changing { sql, changes in
            try await Self.serialize(on: "usage " + userID, sql)
            guard try await sql.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil else { return .unknownUser }
            let seen = try await sql.raw(
                "SELECT amount FROM usage_records WHERE user_id = \(bind: userID) AND idempotency_key = \(bind: idempotencyKey)"
            ).first()
            if seen != nil { return .duplicate }
            let used = try await Self.usage(ofUser: userID, since: start, on: sql)
            guard used < limit else { return .exhausted }
            try await sql.raw(
                """
                INSERT INTO usage_records (user_id, idempotency_key, amount, at)
                VALUES (\(bind: userID), \(bind: idempotencyKey), \(bind: amount), \(bind: time.stored))
                """
            ).run()
            // Usage is refused once the limit is reached, so the record that reaches it does so once per period.
            if used + amount >= limit { try await Self.emit(.budgetExhausted, userID: userID, at: time, on: sql) }
            changes.note(.budgetChanged(userID))
            return .recorded
        }
    }

    static func usage(ofUser userID: String, since start: Date, on sql: any SQLDatabase) async throws -> Double {
        try await sql.raw(
            "SELECT COALESCE(SUM(amount), 0) AS used FROM usage_records WHERE user_id = \(bind: userID) AND at > \(bind: start.stored)"
        ).first()?.decode(column: "used", as: Double.self) ?? 0
    }
}
