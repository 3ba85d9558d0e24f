import Foundation
import SQLKit

/// The answer to one rate-limited request.
package enum RateLimitDecision: Sendable, Equatable {
    /// Counted; `remaining` more fit in the window, which frees its oldest hit at `resetAt`.
    case allowed(hitID: String, remaining: Int, resetAt: Date)
    /// Over the limit until `resetAt`.
    case denied(resetAt: Date)
}

/// Hits per bucket in a rolling window, in the database so that every server process shares them.
package protocol RateLimitStore: Sendable {
    /// Counts a hit in `bucket` unless `limit` hits are already in the window ending `now`; atomic, so
    /// concurrent requests can never exceed the limit.
    func recordHit(bucket: String, limit: Int, window: TimeInterval, now: Date) async throws -> RateLimitDecision
    /// Takes back a hit (a request that should not count after all).
    func removeHit(bucket: String, hitID: String) async throws
    /// Takes back every hit of `bucket` (the count starts afresh).
    func removeHits(bucket: String) async throws
    /// The hits in the window ending `now` and the oldest of them, counting nothing: one read.
    func hits(bucket: String, window: TimeInterval, now: Date) async throws -> (count: Int, oldest: Date?)
}

extension SQLLatchkeyStore: RateLimitStore {
    package func recordHit(bucket: String, limit: Int, window: TimeInterval, now: Date) async throws -> RateLimitDecision {
        try await self.database.transaction { sql in
            // On PostgreSQL concurrent transactions would each count the same hits: one at a time per bucket.
            try await Self.serialize(on: "rate-limit " + bucket, sql)
            // Hits that left the window go first, so the table holds at most `limit` rows per bucket.
            try await sql.raw("DELETE FROM rate_limit_hits WHERE bucket = \(bind: bucket) AND at <= \(bind: (now - window).stored)").run()
            let (hits, first) = try await Self.hits(bucket: bucket, window: window, now: now, on: sql)
            let oldest = first ?? now
            guard hits < limit else { return .denied(resetAt: oldest + window) }
            let hitID = try await Self.recordHit(bucket: bucket, at: now, on: sql)
            return .allowed(hitID: hitID, remaining: limit - hits - 1, resetAt: oldest + window)
        }
    }

    package func hits(bucket: String, window: TimeInterval, now: Date) async throws -> (count: Int, oldest: Date?) {
        try await self.database.read { sql in try await Self.hits(bucket: bucket, window: window, now: now, on: sql) }
    }

    /// Records one hit of `bucket` at `time` inside the caller's transaction; returns its ID.
    @discardableResult
    static func recordHit(bucket: String, at time: Date, on sql: any SQLDatabase) async throws -> String {
        let hitID = UUID().uuidString.lowercased()
        try await sql.raw("INSERT INTO rate_limit_hits (bucket, at, id) VALUES (\(bind: bucket), \(bind: time.stored), \(bind: hitID))").run()
        return hitID
    }

    /// The hits of `bucket` in the window ending `now`, and the oldest of them.
    static func hits(bucket: String, window: TimeInterval, now: Date, on sql: any SQLDatabase) async throws -> (count: Int, oldest: Date?) {
        let row = try await sql.raw(
            "SELECT COUNT(*) AS hits, MIN(at) AS oldest FROM rate_limit_hits WHERE bucket = \(bind: bucket) AND at > \(bind: (now - window).stored)"
        ).first()
        return (try row?.decode(column: "hits", as: Int.self) ?? 0, try row?.optionalDate("oldest"))
    }

    package func removeHits(bucket: String) async throws {
        try await self.database.transaction { sql in try await sql.raw("DELETE FROM rate_limit_hits WHERE bucket = \(bind: bucket)").run() }
    }

    package func removeHit(bucket: String, hitID: String) async throws {
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM rate_limit_hits WHERE bucket = \(bind: bucket) AND id = \(bind: hitID)").run()
        }
    }
}
