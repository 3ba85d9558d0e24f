import Foundation
import SQLKit

/// How many rows one pruning pass removed, by table.
@available(LatchkeyServer 1.0, *)
package struct PruneCounts: Sendable, Equatable {
    package var rateLimitHits = 0
    package var refreshTokens = 0
    package var sessions = 0
    package var nonces = 0
    package var proofs = 0
    package var revocations = 0

    package var total: Int { self.rateLimitHits + self.refreshTokens + self.sessions + self.nonces + self.proofs + self.revocations }
}

/// Rows that no longer decide anything, removed so the database stays bounded.
@available(LatchkeyServer 1.0, *)
package protocol PruningStore: Sendable {
    /// Removes, as of `now`: rate-limit hits older than `hitsBefore` (outside every window), refresh tokens past their
    /// expiry, sessions revoked before `sessionsBefore` or left without refresh tokens, spent nonces and DPoP proofs
    /// past their expiry, and revocation-feed entries older than `feedBefore` (the newest always stays).
    func prune(now: Date, hitsBefore: Date, sessionsBefore: Date, feedBefore: Date) async throws -> PruneCounts
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: PruningStore {
    package func prune(now: Date, hitsBefore: Date, sessionsBefore: Date, feedBefore: Date) async throws -> PruneCounts {
        try await self.database.transaction { sql in
            func delete(_ statement: SQLQueryString) async throws -> Int {
                try await sql.raw("\(statement) RETURNING 1 AS gone").all().count
            }
            var counts = PruneCounts()
            counts.rateLimitHits = try await delete("DELETE FROM rate_limit_hits WHERE at < \(bind: hitsBefore.stored)")
            counts.refreshTokens = try await delete("DELETE FROM refresh_tokens WHERE expires_at < \(bind: now.stored)")
            counts.sessions = try await delete(
                """
                DELETE FROM sessions WHERE revoked_at < \(bind: sessionsBefore.stored)
                OR NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id)
                """)
            counts.nonces = try await delete("DELETE FROM used_nonces WHERE expires_at < \(bind: now.stored)")
            counts.proofs = try await delete("DELETE FROM dpop_proofs WHERE expires_at < \(bind: now.stored)")
            // The newest entry stays: SQLite would otherwise hand out its sequence number again once the table is
            // empty, and running processes, whose cursor is past it, would never read the new entries.
            counts.revocations = try await delete(
                "DELETE FROM revocations WHERE created_at < \(bind: feedBefore.stored) AND seq < (SELECT MAX(seq) FROM revocations)")
            return counts
        }
    }
}
