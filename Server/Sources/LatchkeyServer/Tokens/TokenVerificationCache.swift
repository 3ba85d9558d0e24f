import Foundation
import LatchkeyAPI
import Synchronization

/// Tokens verified recently, so a repeated token skips ES256 and the revocation lookup.
///
/// Bounded: at capacity, expired entries go first, then everything (a rare full reset costs one
/// verification per live token). An entry is trusted until the earlier of the token's `exp` and
/// `ceiling` after it was verified; logout, reuse detection, code revocation, key revocation and account
/// deletion drop the entries they concern at once (it follows the store's ``StoreChanges``). Dropping an
/// entry drops every mention of its token, so a long run of sign-ins and logouts leaves nothing behind.
final class TokenVerificationCache: Sendable {
    private struct Entry {
        let token: VerifiedToken
        let trustedUntil: Date
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// "s:<session id>", "u:<user id>", "j:<token id>", "k:<kid>" → the cached tokens they cover.
        var owners: [String: Set<String>] = [:]

        mutating func remove(_ token: String) {
            guard let entry = self.entries.removeValue(forKey: token) else { return }
            for owner in TokenVerificationCache.owners(of: entry.token) {
                self.owners[owner]?.remove(token)
                if self.owners[owner]?.isEmpty == true { self.owners[owner] = nil }
            }
        }
    }

    private let capacity: Int
    private let ceiling: TimeInterval
    private let state = Mutex(State())

    init(capacity: Int, ceiling: TimeInterval) {
        self.capacity = max(capacity, 0)
        self.ceiling = ceiling
    }

    func lookup(_ token: String, now: Date) -> VerifiedToken? {
        self.state.withLock { state in
            guard let entry = state.entries[token] else { return nil }
            return entry.trustedUntil > now ? entry.token : nil
        }
    }

    func insert(_ token: String, verified: VerifiedToken, now: Date) {
        guard self.capacity > 0 else { return }
        let entry = Entry(token: verified, trustedUntil: min(verified.expiresAt, now.addingTimeInterval(self.ceiling)))
        self.state.withLock { state in
            if state.entries.count >= self.capacity {
                Self.evict(from: &state, now: now, capacity: self.capacity)
            }
            state.remove(token)
            state.entries[token] = entry
            for owner in Self.owners(of: verified) { state.owners[owner, default: []].insert(token) }
        }
    }

    /// Drops the tokens each change ends (`owners(of:)`). Subscribe it before anything that verifies
    /// tokens on hearing a change (``EventHub``), so that the verification already misses them.
    func follow(_ changes: StoreChanges) {
        changes.subscribe { [weak self] change in self?.invalidate(owners: Self.owners(of: change)) }
    }

    /// Cached tokens and index entries, for tests that check nothing is left behind.
    var size: (entries: Int, indexed: Int) {
        self.state.withLock { state in (state.entries.count, state.owners.values.reduce(0) { $0 + $1.count }) }
    }

    private func invalidate(owners: [String]) {
        guard !owners.isEmpty else { return }
        self.state.withLock { state in
            for owner in owners {
                for token in state.owners[owner] ?? [] { state.remove(token) }
            }
        }
    }

    /// The owners whose tokens `change` ends: `s:<session>`, `u:<user>` (deleted), `k:<kid>`, `j:<access code>`.
    static func owners(of change: StoreChange) -> [String] {
        switch change {
        case .sessionsRevoked(let ids): ids.map { "s:" + $0 }
        case .userDeleted(let id): ["u:" + id]
        case .keyRevoked(let kid): ["k:" + kid]
        case .accessCodeRevoked(let id): ["j:" + id]
        case .userSignedOut, .userChanged, .budgetChanged, .identityLinked, .claimsChanged: []
        }
    }

    /// The owners a token is cached under.
    static func owners(of token: VerifiedToken) -> [String] {
        var owners = ["u:" + token.userID, "j:" + token.claims.tokenID]
        if let session = token.sessionID { owners.append("s:" + session) }
        if let kid = token.keyID { owners.append("k:" + kid) }
        return owners
    }

    private static func evict(from state: inout State, now: Date, capacity: Int) {
        for (token, entry) in state.entries where entry.trustedUntil <= now { state.remove(token) }
        if state.entries.count >= capacity { state = State() }
    }
}
