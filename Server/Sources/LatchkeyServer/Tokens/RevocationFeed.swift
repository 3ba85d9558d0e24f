import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Hands the revocations other processes (the CLI, or other servers on the same database) commit to this process's
/// ``StoreChanges``, so its verification cache, profile cache, storage credentials and event sockets follow them.
///
/// Revocations made in this process are published at commit. Those made elsewhere are read from the
/// feed when the database notifies a commit (PostgreSQL's LISTEN/NOTIFY) and every
/// `revocations.poll-interval` seconds (default 1), which bounds how long a session revoked elsewhere
/// stays usable here when no notification comes (SQLite, or a lost listening connection). Access codes
/// are checked against the database on every use, so their revocation is immediate everywhere.
package final class RevocationFeed: Service, Sendable {
    let store: any RevocationStore
    let changes: StoreChanges
    /// Reloaded when another process revoked a signing key.
    let keyRing: SigningKeyRing
    let interval: TimeInterval
    let clock: any WallClock
    let logger: Logger
    private let cursor = Mutex<Int?>(nil)

    init(
        store: any RevocationStore, changes: StoreChanges, keyRing: SigningKeyRing, interval: TimeInterval, clock: any WallClock,
        logger: Logger
    ) {
        self.store = store
        self.changes = changes
        self.keyRing = keyRing
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    /// Starts reading after the newest entry: what came before is already reflected in the database.
    func start() async throws {
        let latest = try await self.store.latestRevocationSequence()
        self.cursor.withLock { $0 = latest }
    }

    /// Reads new entries and hands them to the subscribers of ``StoreChanges``; returns how many it read.
    @discardableResult
    package func poll() async throws -> Int {
        guard let after = self.cursor.withLock({ $0 }) else {
            try await self.start()
            return 0
        }
        let events = try await self.store.revocations(after: after, limit: 1000)
        // This process's own entries come round again: dropping what is already gone does nothing.
        self.changes.received(events.flatMap { RevocationEvent.changes(scope: $0.scope, values: [$0.value]) })
        if events.contains(where: { $0.scope == .key }) { try await self.keyRing.reload() }
        if let last = events.last { self.cursor.withLock { $0 = max($0 ?? 0, last.sequence) } }
        return events.count
    }

    /// Reads the feed whenever the database says another process committed revocations (PostgreSQL's
    /// LISTEN/NOTIFY: within milliseconds) and, whatever happens to that connection, every `interval` seconds.
    package func run() async throws {
        // A service that returns would stop the whole group: without an interval (refused at start) it only waits.
        guard self.interval > 0 else { return try await gracefulShutdown() }
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.tick(wake) }
                group.addTask { await self.follow(wake) }
                for await _ in wakes {
                    do {
                        while try await self.poll() == 1000 {}
                    } catch {
                        self.logger.error("reading the revocation feed failed", metadata: ["error": "\(error)"])
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Wakes the reader every `interval` seconds.
    private func tick(_ wake: AsyncStream<Void>.Continuation) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(self.interval)) } catch { return }
            wake.yield()
        }
    }

    /// Wakes the reader at each notification, listening again (after one `interval`) when the connection fails;
    /// returns at once where the database has no notifications.
    private func follow(_ wake: AsyncStream<Void>.Continuation) async {
        await followNotifications(
            retryInterval: self.interval, logger: self.logger,
            warning: "listening for revocations failed; reading the feed every poll interval until it is back",
            // What was committed while nobody listened is read now.
            relistened: { wake.yield() }
        ) { try await self.store.followRevocations({ wake.yield() }) }
    }
}
