import Foundation
import Logging
import ServiceLifecycle

/// Removes rows that no longer decide anything (``PruningStore``) every `prune.interval` seconds of the injected clock, so the
/// database stays bounded however long the server runs. Several processes may prune at once: each pass is deletes by
/// time in short transactions of a batch each, and a second pass finds nothing.
package struct StorePruner: Service {
    let store: any PruningStore
    let clock: any WallClock
    let interval: TimeInterval
    /// Each rate limit's and meter's window, by policy name: a hit older than its own policy's window counts for nothing.
    let limitWindows: [String: TimeInterval]
    /// `tokens.refresh-grace`: a spent refresh token presented again this long after its use still gets the newest token.
    let refreshGrace: TimeInterval
    /// `prune.sent-mail-after` and `prune.unverified-accounts-after`, seconds.
    let sentMailAfter: TimeInterval
    let unverifiedAccountsAfter: TimeInterval
    let logger: Logger
    /// Revoked sessions and feed entries are kept this long (other processes' caches trust entries for far less).
    static let retention: TimeInterval = 86_400

    /// Finished webhook deliveries (and their events) are kept this long for `latchkey webhooks deliveries`; an event no
    /// endpoint took, a day.
    static let webhookRetention: TimeInterval = 30 * 86_400

    /// Rows each delete removes per transaction (see ``PruneRules/batchSize``).
    var batchSize = 20_000

    /// One pass, as of the clock's now: every delete runs in transactions of at most ``batchSize`` rows until one removes
    /// fewer, so the pass works off any backlog.
    @discardableResult
    package func prune() async throws -> PruneCounts {
        let now = self.clock.now()
        let counts = try await self.store.prune(
            PruneRules(
                now: now, hitWindows: self.limitWindows, hitsBefore: now - (self.limitWindows.values.max() ?? Self.retention),
                spentTokensBefore: now - self.refreshGrace, sessionsBefore: now - Self.retention, feedBefore: now - Self.retention,
                sentMailBefore: now - self.sentMailAfter, unverifiedAccountsBefore: now - self.unverifiedAccountsAfter,
                webhookEventsBefore: now - Self.webhookRetention, unsentWebhookEventsBefore: now - Self.retention, batchSize: self.batchSize))
        if counts.total > 0 { self.logger.debug("pruned", metadata: ["rows": "\(counts.total)"]) }
        return counts
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await self.clock.sleep(for: self.interval) }
            } catch { return }
            do { try await self.prune() } catch {
                self.logger.error("pruning the database failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
