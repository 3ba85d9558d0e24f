import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps this process's verification cache in step with revocations made by other processes
/// (the CLI, or other servers on the same database).
///
/// Revocations made in this process clear the cache at once. Those made elsewhere are read from the
/// feed every `revocations.poll-interval` seconds (default 1), which bounds how long a session
/// revoked elsewhere stays usable here. Access codes are checked against the database on every use,
/// so their revocation is immediate everywhere.
@available(LatchkeyServer 1.0, *)
public final class RevocationFeed: Service, Sendable {
    let store: any RevocationStore
    let cache: TokenVerificationCache
    let interval: TimeInterval
    let clock: any WallClock
    let logger: Logger
    private let cursor = Mutex<Int?>(nil)

    init(store: any RevocationStore, cache: TokenVerificationCache, interval: TimeInterval, clock: any WallClock, logger: Logger) {
        self.store = store
        self.cache = cache
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    /// Starts reading after the newest entry: what came before is already reflected in the database.
    func start() async throws {
        let latest = try await self.store.latestRevocationSequence()
        self.cursor.withLock { $0 = latest }
    }

    /// Reads new entries and clears what they cover from the cache; returns how many it applied.
    @discardableResult
    public func poll() async throws -> Int {
        guard let after = self.cursor.withLock({ $0 }) else {
            try await self.start()
            return 0
        }
        let events = try await self.store.revocations(after: after, limit: 1000)
        for event in events {
            switch event.scope {
            case .session: self.cache.invalidate(sessionIDs: [event.value])
            case .user: self.cache.invalidate(userID: event.value)
            }
        }
        if let last = events.last { self.cursor.withLock { $0 = max($0 ?? 0, last.sequence) } }
        return events.count
    }

    public func run() async throws {
        guard self.interval > 0 else { return }
        var polls = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(self.interval)) }
            } catch { return }
            do {
                while try await self.poll() == 1000 {}
                polls += 1
                // Entries older than a day are of no use to anyone: caches trust entries for far less.
                if polls % 3600 == 0 { try await self.store.pruneRevocations(before: self.clock.now().addingTimeInterval(-86_400)) }
            } catch {
                self.logger.error("reading the revocation feed failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
