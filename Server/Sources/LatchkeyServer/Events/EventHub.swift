import Foundation
import LatchkeyAPI
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// The open event sockets of this process (`GET /api/v1/events`), and what they are told.
///
/// Every socket is registered under the owners its token has in the verification cache (its session, its user, its
/// token ID, its signing key). The hub follows the store's ``StoreChanges``: whatever ends those owners — a logout, a
/// refresh-token reuse, a revoked code or key, a deletion, here or in another process through the revocation feed —
/// makes it verify the sockets' tokens again: a socket whose token no longer passes hears `session.revoked` with the
/// reason and is closed with 4001. Changes that end nothing (usage recorded, an identity linked, claims changed) are told to the user's
/// sockets. Token expiry is checked against the injected clock by ``sweep()``. What takes a database read (checking
/// tokens again, reading a budget, a `reauthenticate` frame) is queued and run by ``EventSweeper``, one child task
/// each, so no task outlives the server's service group.
package final class EventHub: Sendable {
    /// What a socket is asked to do.
    package enum Outgoing: Sendable, Equatable {
        case frame(SessionEventFrame)
        /// Close the socket with `code` (after the frames before it).
        case close(code: UInt16, reason: String)
    }

    private struct Entry {
        let id: UInt64
        var token: String
        var verified: VerifiedToken
        var owners: [String]
        var expiringSent = false
        /// Set once an ending (revoked, expired, displaced) was queued: nothing more is sent.
        var ending = false
        let client: String
        let sink: any EventSocketSink
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var byOwner: [String: Set<UInt64>] = [:]
        /// Per user, socket IDs oldest first.
        var byUser: [String: [UInt64]] = [:]
        var perClient: [String: Int] = [:]
        var nextID: UInt64 = 1
    }

    let verifier: AccessTokenVerifier
    let lookups: any EventLookups
    let budgets: BudgetService
    let configuration: EventsConfiguration
    let clock: any WallClock
    let metrics: LatchkeyMetrics
    let logger: Logger
    private let state = Mutex(State())

    /// Work run by ``work()`` rather than in the task that asked for it.
    private enum Job: Sendable {
        case recheck(Set<UInt64>)
        case changed(StoreChange)
        case reauthenticate(UInt64, token: String)
    }
    private let jobs: AsyncStream<Job>
    private let queue: AsyncStream<Job>.Continuation

    init(
        verifier: AccessTokenVerifier, lookups: any EventLookups, budgets: BudgetService, configuration: EventsConfiguration, clock: any WallClock,
        metrics: LatchkeyMetrics, logger: Logger
    ) {
        self.verifier = verifier
        self.lookups = lookups
        self.budgets = budgets
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        (self.jobs, self.queue) = AsyncStream.makeStream(of: Job.self)
    }

    /// Hears every change (subscribe it after the verification cache): sockets whose token a change may have ended are
    /// checked again, and usage and linking are told to the user's sockets. Nothing is queued for users without sockets.
    func follow(_ changes: StoreChanges) {
        changes.subscribe { [weak self] change in self?.heard(change) }
    }

    private func heard(_ change: StoreChange) {
        switch change {
        case .budgetChanged(let userID), .identityLinked(let userID, _), .claimsChanged(let userID):
            guard self.state.withLock({ $0.byUser[userID] != nil }) else { return }
            self.queue.yield(.changed(change))
        default:
            // Most changes end no token (a refresh, a profile write): those cost no lock here.
            let owners = TokenVerificationCache.owners(of: change)
            guard !owners.isEmpty else { return }
            let ids = self.state.withLock { state in owners.reduce(into: Set<UInt64>()) { $0.formUnion(state.byOwner[$1] ?? []) } }
            guard !ids.isEmpty else { return }
            self.queue.yield(.recheck(ids))
        }
    }

    /// Runs the queued work, each job in a child task, until the calling task is cancelled (``EventSweeper``).
    func work() async {
        await withDiscardingTaskGroup { group in
            for await job in self.jobs {
                group.addTask {
                    switch job {
                    case .recheck(let ids): await self.recheck(ids)
                    case .changed(let change): await self.changed(change)
                    case .reauthenticate(let id, let token): await self.reauthenticate(id, with: token)
                    }
                }
            }
        }
    }

    /// Open sockets in total, and from `client` (a limit key: an IPv4 address or an IPv6 /64).
    package func count(client: String? = nil) -> Int {
        self.state.withLock { state in client.map { state.perClient[$0] ?? 0 } ?? state.entries.count }
    }

    /// Registers a socket for `verified`, which hears the hub through `sink`. The user's oldest sockets beyond
    /// `events.max-sockets-per-user` are closed with 4008.
    package func register(token: String, verified: VerifiedToken, client: String, sink: any EventSocketSink) -> UInt64 {
        let now = self.clock.now()
        var connected = SessionEventFrame(type: SessionEventType.connected, at: now)
        connected.userID = verified.userID
        connected.sessionID = verified.sessionID
        connected.expiresAt = verified.expiresAt
        let (id, displaced, total) = self.state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            let owners = TokenVerificationCache.owners(of: verified)
            state.entries[id] = Entry(id: id, token: token, verified: verified, owners: owners, client: client, sink: sink)
            for owner in owners { state.byOwner[owner, default: []].insert(id) }
            state.byUser[verified.userID, default: []].append(id)
            state.perClient[client, default: 0] += 1
            var displaced: [any EventSocketSink] = []
            let live = state.byUser[verified.userID, default: []].filter { state.entries[$0]?.ending == false }
            for oldest in live.dropLast(self.configuration.maxSocketsPerUser) {
                state.entries[oldest]?.ending = true
                if let entry = state.entries[oldest] { displaced.append(entry.sink) }
            }
            return (id, displaced, state.entries.count)
        }
        self.metrics.eventSockets(total)
        self.send(connected, to: sink)
        for other in displaced {
            // The frame first: clients whose WebSocket stack does not pass 4008 on (FoundationNetworking) still know why.
            var frame = SessionEventFrame(type: SessionEventType.error, at: now)
            frame.error = "too_many_sockets"
            frame.message = "This user opened more than \(self.configuration.maxSocketsPerUser) event sockets; this, the oldest, is closed (4008)."
            self.send(frame, to: other)
            other.deliver(.close(code: SessionEventCloseCode.tooManySockets, reason: "too many event sockets for this user"))
        }
        return id
    }

    /// Forgets a closed socket.
    package func unregister(_ id: UInt64) {
        let total: Int? = self.state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: id) else { return nil }
            for owner in entry.owners { Self.remove(id, from: owner, in: &state) }
            state.byUser[entry.verified.userID]?.removeAll { $0 == id }
            if state.byUser[entry.verified.userID]?.isEmpty == true { state.byUser[entry.verified.userID] = nil }
            state.perClient[entry.client, default: 1] -= 1
            if state.perClient[entry.client] == 0 { state.perClient[entry.client] = nil }
            return state.entries.count
        }
        total.map { self.metrics.eventSockets($0) }
    }

    /// A frame the client sent on socket `id`: `reauthenticate` swaps the socket's token for a newer one of the same
    /// user (once verified, by ``work()``); anything else is answered at once with an `error` frame.
    package func received(_ text: String, on id: UInt64) {
        guard let frame = try? JSONDecoder().decode(SessionEventFrame.self, from: Data(text.utf8)) else {
            return self.reply(id, error: "bad_frame", "Frames are JSON objects with a \"type\".")
        }
        guard frame.type == SessionEventType.reauthenticate else {
            return self.reply(id, error: "unknown_type", "The only frame a client sends is {\"type\": \"reauthenticate\", \"token\": …}.")
        }
        guard let token = frame.token, !token.isEmpty else {
            return self.reply(id, error: "bad_frame", "reauthenticate needs \"token\": a newer access token.")
        }
        self.queue.yield(.reauthenticate(id, token: token))
    }

    private func reauthenticate(_ id: UInt64, with token: String) async {
        let verified: VerifiedToken
        do { verified = try await self.verifier.verify(token) } catch let rejection as TokenRejection {
            return self.reply(id, error: "invalid_token", "That token was refused (\(rejection)); the socket keeps its current one.")
        } catch {
            return self.reply(id, error: "unavailable", "The token could not be checked now; the socket keeps its current one.")
        }
        let now = self.clock.now()
        let sink: (any EventSocketSink)? = self.state.withLock { state in
            guard var entry = state.entries[id], !entry.ending else { return nil }
            guard entry.verified.userID == verified.userID else { return nil }
            for owner in entry.owners { Self.remove(id, from: owner, in: &state) }
            entry.token = token
            entry.verified = verified
            entry.owners = TokenVerificationCache.owners(of: verified)
            entry.expiringSent = false
            for owner in entry.owners { state.byOwner[owner, default: []].insert(id) }
            state.entries[id] = entry
            return entry.sink
        }
        guard let sink else {
            return self.reply(id, error: "wrong_user", "That token belongs to another user; the socket keeps its current one.")
        }
        var answer = SessionEventFrame(type: SessionEventType.reauthenticated, at: now)
        answer.expiresAt = verified.expiresAt
        self.send(answer, to: sink)
    }

    /// Sends `token.expiring` to sockets whose token expires within a minute and ends those whose token expired
    /// (`token.expired`, close 4002).
    package func sweep() {
        let now = self.clock.now()
        let warning = self.configuration.expiryWarning
        let (expiring, expired) = self.state.withLock { state in
            var expiring: [(any EventSocketSink, Date)] = []
            var expired: [any EventSocketSink] = []
            for (id, entry) in state.entries where !entry.ending {
                if entry.verified.expiresAt <= now {
                    state.entries[id]?.ending = true
                    expired.append(entry.sink)
                } else if !entry.expiringSent, entry.verified.expiresAt.timeIntervalSince(now) <= warning {
                    state.entries[id]?.expiringSent = true
                    expiring.append((entry.sink, entry.verified.expiresAt))
                }
            }
            return (expiring, expired)
        }
        for (sink, expiresAt) in expiring {
            var frame = SessionEventFrame(type: SessionEventType.tokenExpiring, at: now)
            frame.expiresAt = expiresAt
            self.send(frame, to: sink)
        }
        for sink in expired {
            self.send(SessionEventFrame(type: SessionEventType.tokenExpired, at: now), to: sink)
            sink.deliver(.close(code: SessionEventCloseCode.expired, reason: "access token expired"))
        }
    }

    /// Closes every socket with 1001 (going away): the server is shutting down, and clients reconnect elsewhere.
    package func closeAll() {
        let sinks = self.state.withLock { state in
            state.entries.keys.compactMap { id -> (any EventSocketSink)? in
                guard state.entries[id]?.ending == false else { return nil }
                state.entries[id]?.ending = true
                return state.entries[id]?.sink
            }
        }
        for sink in sinks { sink.deliver(.close(code: 1001, reason: "server shutting down")) }
    }

    /// A change that ends nothing (usage, linking): told to the user's sockets.
    private func changed(_ change: StoreChange) async {
        guard let userID = change.userID, self.state.withLock({ $0.byUser[userID] != nil }) else { return }
        var frame: SessionEventFrame
        switch change {
        case .budgetChanged:
            guard let budget = try? await self.budgets.budget(ofUser: userID) else { return }
            frame = SessionEventFrame(type: SessionEventType.budgetChanged, at: self.clock.now())
            (frame.limit, frame.used, frame.remaining) = (budget.limit, budget.used, budget.remaining)
        case .identityLinked(_, let provider):
            frame = SessionEventFrame(type: SessionEventType.identityLinked, at: self.clock.now())
            frame.provider = provider
        case .claimsChanged:
            // The SDK refreshes at once: its next access token carries the new claims.
            frame = SessionEventFrame(type: SessionEventType.claimsChanged, at: self.clock.now())
        default: return
        }
        let sinks = self.state.withLock { state in
            (state.byUser[userID] ?? []).compactMap { state.entries[$0] }.filter { !$0.ending }.map(\.sink)
        }
        for sink in sinks { self.send(frame, to: sink) }
    }

    /// Verifies the sockets' tokens again; those refused hear why and are closed.
    package func recheck(_ ids: Set<UInt64>) async {
        for id in ids {
            guard let entry = self.state.withLock({ $0.entries[id] }), !entry.ending else { continue }
            do {
                _ = try await self.verifier.verify(entry.token)
                continue
            } catch let rejection as TokenRejection where rejection != .expired {
                // Refused for good: below.
            } catch {
                // Expired tokens are the sweep's; a database that is down decides nothing.
                continue
            }
            let ending = (try? await self.lookups.ending(of: entry.verified)) ?? SessionEnding(reason: .admin, userDeleted: false)
            guard self.state.withLock({ state in state.entries[id].map { !$0.ending } ?? false }) else { continue }
            self.state.withLock { $0.entries[id]?.ending = true }
            let now = self.clock.now()
            if ending.userDeleted { self.send(SessionEventFrame(type: SessionEventType.userDeleted, at: now), to: entry.sink) }
            var frame = SessionEventFrame(type: SessionEventType.sessionRevoked, at: now)
            frame.reason = ending.reason.rawValue
            self.send(frame, to: entry.sink)
            entry.sink.deliver(.close(code: SessionEventCloseCode.revoked, reason: "session revoked"))
        }
    }

    package func reply(_ id: UInt64, error code: String, _ message: String) {
        guard let sink = self.state.withLock({ $0.entries[id]?.sink }) else { return }
        var frame = SessionEventFrame(type: SessionEventType.error, at: self.clock.now())
        frame.error = code
        frame.message = message
        self.send(frame, to: sink)
    }

    private func send(_ frame: SessionEventFrame, to sink: any EventSocketSink) {
        sink.deliver(.frame(frame))
        self.metrics.eventSent(type: frame.type)
    }

    private static func remove(_ id: UInt64, from owner: String, in state: inout State) {
        state.byOwner[owner]?.remove(id)
        if state.byOwner[owner]?.isEmpty == true { state.byOwner[owner] = nil }
    }
}

/// Why a socket's session ended, as `session.revoked` says it.
package struct SessionEnding: Sendable, Equatable {
    package var reason: SessionRevocationReason
    /// The user is gone: `user.deleted` comes first.
    package var userDeleted: Bool
}

/// What the hub reads to say why a token stopped working.
package protocol EventLookups: Sendable {
    func ending(of token: VerifiedToken) async throws -> SessionEnding
}

extension SQLLatchkeyStore: EventLookups {
    package func ending(of token: VerifiedToken) async throws -> SessionEnding {
        let sessionID = token.sessionID ?? ""
        let userID = token.userID
        return try await self.database.read { sql in
            guard try await sql.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil else {
                return SessionEnding(reason: .deleted, userDeleted: true)
            }
            let stored = try await sql.raw("SELECT revoked_reason FROM sessions WHERE id = \(bind: sessionID)").first()
            let reason = SessionRevocationReason(stored: try stored?.decode(column: "revoked_reason", as: String?.self))
            return SessionEnding(reason: reason, userDeleted: false)
        }
    }
}

/// Runs the hub's queued work (``EventHub/work()``) and ``EventHub/sweep()`` every second of the injected clock (token
/// expiry); at graceful shutdown it closes every socket with 1001.
package struct EventSweeper: Service {
    let hub: EventHub

    package func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.hub.work() }
            while !Task.isShuttingDownGracefully {
                do { try await cancelWhenGracefulShutdown { try await self.hub.clock.sleep(for: 1) } } catch { break }
                self.hub.sweep()
            }
            self.hub.closeAll()
            group.cancelAll()
        }
    }
}
