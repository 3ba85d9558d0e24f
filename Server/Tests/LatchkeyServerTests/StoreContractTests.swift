import Foundation
import LatchkeyAPI
import Logging
import SQLKit
import Synchronization
import Testing

// `@testable`: the records' memberwise initialisers and `Migrations` are internal. Debug builds (the
// only ones `swift test` and `scripts/test` make) compile LatchkeyServer with testing enabled.
@testable import LatchkeyServer

/// One behaviour every store implementation must have, written once and run on each database.
struct StoreContract: Sendable, CustomStringConvertible {
    let description: String
    let run: @Sendable (SQLLatchkeyStore) async throws -> Void

    init(_ description: String, _ run: @escaping @Sendable (SQLLatchkeyStore) async throws -> Void) {
        self.description = description
        self.run = run
    }
}

@Suite("Store contract: SQLite")
struct SQLiteStoreContractTests {
    @Test(arguments: StoreContract.all)
    func contract(_ contract: StoreContract) async throws {
        try await withStore(.sqlite, contract.run)
    }
}

@Suite("Store contract: PostgreSQL", .enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct PostgresStoreContractTests {
    @Test(arguments: StoreContract.all)
    func contract(_ contract: StoreContract) async throws {
        try await withStore(.postgresql, contract.run)
    }
}

/// Runs `body` on a store over a fresh, migrated database of `backend`, then closes the database
/// (also when `body` throws).
private func withStore(_ backend: TestBackend, _ body: @Sendable (SQLLatchkeyStore) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-store-contract-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let location = try await backend.freshDatabase(in: directory)
    let logger = TestServer.quietLogger
    let database: any LatchkeyDatabase =
        switch backend {
        case .sqlite: try await SQLiteLatchkeyDatabase(path: location, logger: logger)
        // Several connections, so the concurrency contracts really run transactions side by side; few
        // enough that contracts running in parallel stay well under PostgreSQL's connection limit.
        case .postgresql: try PostgresLatchkeyDatabase(url: location, timeout: 30, maximumConnections: 6, logger: logger)
        }
    try await database.whileRunning {
        try await Migrations.run(on: database, clock: ManualClock(start: contractEpoch), logger: logger)
        try await body(SQLLatchkeyStore(database: database))
    }
}

// MARK: - Fixtures

/// The contracts' "now". Whole seconds, so stored times read back exactly.
private let contractEpoch = Date(timeIntervalSince1970: 1_900_000_000)

private func at(_ seconds: TimeInterval) -> Date { contractEpoch.addingTimeInterval(seconds) }

private func newID() -> String { UUID().uuidString.lowercased() }

/// A new Apple ID.
private func appleIdentity() -> FederatedIdentity {
    FederatedIdentity(
        provider: "apple", subject: "apple." + newID(), userID: "", email: nil, clientID: nil, sealedRefreshToken: nil, createdAt: at(0))
}

private func newSession(user: String, device: String? = nil, at time: Date = at(0), expiresIn lifetime: TimeInterval = 3600) -> NewSession {
    NewSession(
        id: newID(), userID: user, deviceID: device, createdAt: time, refreshTokenHash: "hash-" + newID(),
        refreshTokenExpiresAt: time.addingTimeInterval(lifetime))
}

private func record(_ session: NewSession, revokedAt: Date? = nil) -> SessionRecord {
    SessionRecord(
        id: session.id, userID: session.userID, deviceID: session.deviceID, createdAt: session.createdAt, revokedAt: revokedAt,
        dpopThumbprint: session.proof?.thumbprint)
}

/// A DPoP proof as the verifier hands it to the stores: a key thumbprint and a fresh `jti`.
private func proof(_ thumbprint: String, jti: String = newID(), expiresAt: Date = at(600)) -> VerifiedProof {
    VerifiedProof(thumbprint: thumbprint, tokenIDHash: "jti-" + jti, expiresAt: expiresAt)
}

/// Registers a new device (its user, the device, its first session) the way `register-device` does.
private func registerDevice(_ store: SQLLatchkeyStore, at time: Date = at(0)) async throws -> (device: DeviceRecord, session: NewSession) {
    let id = newID()
    let device = DeviceRecord(id: id, userID: id, secretHash: "secret-" + newID(), createdAt: time, lastSeenAt: time)
    let session = newSession(user: id, device: id, at: time)
    #expect(try await store.registerNewDevice(device, session: session) == .created)
    return (device, session)
}

private func accessCode(user: String, at time: Date, note: String? = nil) -> AccessCodeRecord {
    AccessCodeRecord(id: newID(), userID: user, note: note, createdAt: time, expiresAt: time.addingTimeInterval(86_400), revokedAt: nil)
}

private func signingKey(at time: Date) -> SigningKeyRecord {
    SigningKeyRecord(
        kid: newID(), algorithm: "ES256", publicKeyPEM: "public " + newID(), sealedPrivateKey: "sealed " + newID(), createdAt: time,
        retiredAt: nil)
}

/// Every change a store's feed publishes from now on, in order.
private final class ChangeRecorder: Sendable {
    private let changes = Mutex<[StoreChange]>([])

    init(_ feed: StoreChanges) {
        feed.subscribe { [weak self] change in self?.changes.withLock { $0.append(change) } }
    }

    var all: [StoreChange] { self.changes.withLock { $0 } }
    func clear() { self.changes.withLock { $0 = [] } }
}

/// Every revocation entry, oldest first.
private func feed(_ store: SQLLatchkeyStore) async throws -> [RevocationEvent] {
    try await store.revocations(after: 0, limit: 10_000)
}

/// Runs `count` copies of `operation` at once and returns their results.
private func concurrently<T: Sendable>(_ count: Int, _ operation: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
    try await withThrowingTaskGroup(of: T.self) { group in
        for index in 0..<count { group.addTask { try await operation(index) } }
        var results: [T] = []
        for try await result in group { results.append(result) }
        return results
    }
}

// MARK: - The contracts

extension StoreContract {
    static let all: [StoreContract] =
        users + devices + sessions + sessionConcurrency + accessCodes + signingKeys + rateLimits + budgets + revocationFeed + pruning
        + identities + changeFeed + passkeys + appAttest

    // MARK: The change feed

    static let changeFeed: [StoreContract] = [
        StoreContract("change feed: a write publishes what it changed once it committed, and a rolled-back one publishes nothing") {
            store async throws in
            let heard = ChangeRecorder(store.changes)
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await store.changing { sql, changes in
                    changes.note(.userChanged("someone"))
                    try await sql.raw("DELETE FROM users WHERE id = 'nobody'").run()
                    throw Refused()
                }
            }
            #expect(heard.all.isEmpty)

            let (device, session) = try await registerDevice(store)
            heard.clear()
            #expect(try await store.setBudgetLimit(ofUser: device.userID, to: 3))
            #expect(heard.all.contains(.budgetChanged(device.userID)))
            heard.clear()
            #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(1)))
            #expect(heard.all == [.sessionsRevoked([session.id])])
            heard.clear()
            #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(2)) == false)
            #expect(heard.all == [])
        },
        StoreContract("change feed: this process hears the endings it commits as the revocation feed tells the others") { store async throws in
            let heard = ChangeRecorder(store.changes)
            let (device, session) = try await registerDevice(store)
            let code = accessCode(user: device.userID, at: at(0))
            try await store.insertAccessCode(code)
            let (_, other) = try await registerDevice(store)
            heard.clear()
            #expect(try await store.revokeAccessCode(id: code.id, at: at(1)) != nil)
            #expect(try await store.revokeSessions(ofUser: other.userID, keeping: nil, reason: "admin", at: at(2)) == [other.id])
            #expect(try await store.deleteUser(id: device.userID, at: at(3)) != nil)
            let endings = heard.all.filter {
                switch $0 {
                case .sessionsRevoked, .userDeleted, .keyRevoked: true
                default: false
                }
            }
            #expect(endings == (try await feed(store)).flatMap { RevocationEvent.changes(scope: $0.scope, values: [$0.value]) })
            #expect(heard.all.contains(.accessCodeRevoked(code.id)))
            #expect(heard.all.contains(.userSignedOut(other.userID)))
            #expect(heard.all.contains(.userDeleted(device.userID)))
            #expect(heard.all.contains(.sessionsRevoked([session.id])) == false)  // went with the user: no session entry
        },
    ]

    // MARK: Identities

    static let identities: [StoreContract] = [
        StoreContract("a first sign-in creates the user, links the identity, spends the nonce and starts the session") { store async throws in
            let identity = appleIdentity()
            let user = newID()
            let session = newSession(user: "", at: at(0))
            let outcome = try await store.completeSignIn(
                identity, linkingTo: nil, newUserID: user, nonce: SpentNonce(hash: "n1", expiresAt: at(600)), session: session, now: at(0)
            ).0
            #expect(outcome == .created(userID: user))
            #expect(try await store.user(id: user)?.kind == .federated)
            #expect(try await store.identity(provider: "apple", subject: identity.subject)?.userID == user)
            #expect(try await store.session(id: session.id)?.userID == user)
            // The same identity again: its user, a second session; the spent nonce is refused and writes nothing.
            let again = newSession(user: "", at: at(1))
            #expect(
                try await store.completeSignIn(identity, linkingTo: nil, newUserID: newID(), nonce: nil, session: again, now: at(1)).0
                    == .existing(userID: user))
            let replay = newSession(user: "", at: at(2))
            await #expect(throws: TokenRejection.nonceReused) {
                try await store.completeSignIn(
                    identity, linkingTo: nil, newUserID: newID(), nonce: SpentNonce(hash: "n1", expiresAt: at(600)), session: replay, now: at(2))
            }
            #expect(try await store.session(id: replay.id) == nil)
        },
        StoreContract("a sign-in that fails after the user row is written leaves nothing behind and the nonce unspent") { store async throws in
            let (_, existing) = try await registerDevice(store)
            let identity = appleIdentity()
            let user = newID()
            // The session insert fails (its ID is taken): the user, the identity and the nonce are already written by then.
            var clashing = newSession(user: "", at: at(0))
            clashing.id = existing.id
            await #expect(throws: (any Error).self) {
                try await store.completeSignIn(
                    identity, linkingTo: nil, newUserID: user, nonce: SpentNonce(hash: "n2", expiresAt: at(600)), session: clashing, now: at(0))
            }
            #expect(try await store.user(id: user) == nil)
            #expect(try await store.identity(provider: "apple", subject: identity.subject) == nil)
            // The nonce was not spent: the same sign-in goes through.
            let session = newSession(user: "", at: at(1))
            #expect(
                try await store.completeSignIn(
                    identity, linkingTo: nil, newUserID: user, nonce: SpentNonce(hash: "n2", expiresAt: at(600)), session: session, now: at(1)
                ).0
                    == .created(userID: user))
        },
        StoreContract("linking refuses an identity another user has, and writes nothing") { store async throws in
            let (owner, _) = try await registerDevice(store)
            let (other, _) = try await registerDevice(store)
            let identity = appleIdentity()
            _ = try await store.completeSignIn(
                identity, linkingTo: owner.userID, newUserID: newID(), nonce: nil, session: newSession(user: ""), now: at(0))
            let refused = newSession(user: "", at: at(1))
            await #expect(throws: ServiceError.identityAlreadyLinked) {
                try await store.completeSignIn(
                    identity, linkingTo: other.userID, newUserID: newID(), nonce: SpentNonce(hash: "n3", expiresAt: at(600)), session: refused,
                    now: at(1))
            }
            #expect(try await store.session(id: refused.id) == nil)
            #expect(try await store.identity(provider: "apple", subject: identity.subject)?.userID == owner.userID)
            // The refused attempt spent nothing.
            _ = try await store.completeSignIn(
                identity, linkingTo: owner.userID, newUserID: newID(), nonce: SpentNonce(hash: "n3", expiresAt: at(600)),
                session: newSession(user: ""), now: at(2))
        },
    ]

    // MARK: Pruning

    static let pruning: [StoreContract] = [
        StoreContract("pruning removes what no longer decides anything, and nothing else") { store async throws in
            // Rate-limit hits: one old, one recent (in buckets of their own: a hit prunes its own bucket).
            _ = try await store.recordHit(bucket: "old", limit: 10, window: 3600, now: at(0))
            _ = try await store.recordHit(bucket: "b", limit: 10, window: 3600, now: at(5000))
            // Sessions: one revoked long ago, one whose refresh token expired, one live.
            let (_, revoked) = try await registerDevice(store)
            #expect(try await store.revokeSession(id: revoked.id, reason: "test", at: at(10)))
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let expired = newSession(user: user, at: at(0), expiresIn: 100)
            try await store.createSession(expired)
            let live = newSession(user: user, at: at(0), expiresIn: 100_000)
            try await store.createSession(live)
            // A nonce and a proof past their expiry, one of each not.
            for (nonce, expiry) in [("old", at(50)), ("new", at(10_000))] {
                _ = try await store.completeSignIn(
                    appleIdentity(), linkingTo: user, newUserID: newID(), nonce: SpentNonce(hash: nonce, expiresAt: expiry),
                    session: newSession(user: "", at: at(0), expiresIn: 100_000), now: at(0))
            }
            var oldProof = newSession(user: user, at: at(0), expiresIn: 100_000)
            oldProof.proof = proof("key", jti: "old", expiresAt: at(50))
            try await store.createSession(oldProof)

            let counts = try await store.prune(PruneRules(now: at(6000), hitsBefore: at(6000 - 3600), sessionsBefore: at(5000), feedBefore: at(0)))
            #expect(counts.rateLimitHits == 1)
            #expect(counts.refreshTokens == 2)  // the revoked session's (expired at 3600) and the expired one's
            #expect(counts.sessions == 2)  // the revoked one and the one left without refresh tokens
            #expect(counts.nonces == 1)
            #expect(counts.proofs == 1)
            #expect(try await store.session(id: revoked.id) == nil)
            #expect(try await store.session(id: expired.id) == nil)
            #expect(try await store.session(id: live.id) == record(live))
            #expect(try await store.hits(bucket: "b", window: 3600, now: at(6000)).count == 1)
            await #expect(throws: TokenRejection.nonceReused) {
                try await store.completeSignIn(
                    appleIdentity(), linkingTo: user, newUserID: newID(), nonce: SpentNonce(hash: "new", expiresAt: at(10_000)),
                    session: newSession(user: ""), now: at(6000))
            }
            // A second pass finds nothing.
            #expect(try await store.prune(PruneRules(now: at(6000), hitsBefore: at(2400), sessionsBefore: at(5000), feedBefore: at(0))).total == 0)
        },
        StoreContract("pruning removes a rate-limit hit once it is past its own policy's window") { store async throws in
            for bucket in ["short:a", "long:a", "shortened:a"] { _ = try await store.recordHit(bucket: bucket, limit: 10, window: 3600, now: at(0)) }
            let rules = PruneRules(
                now: at(600), hitWindows: ["short": 300, "long": 3600], hitsBefore: at(600 - 3600), sessionsBefore: at(0), feedBefore: at(0))
            #expect(try await store.prune(rules).rateLimitHits == 1)
            #expect(try await store.hits(bucket: "short:a", window: 3600, now: at(600)).count == 0)
            // Another policy whose name starts the same, and the longer policy, keep theirs.
            #expect(try await store.hits(bucket: "shortened:a", window: 3600, now: at(600)).count == 1)
            #expect(try await store.hits(bucket: "long:a", window: 3600, now: at(600)).count == 1)
        },
        StoreContract("one pruning pass removes a backlog of many batches of every kind, batch by batch, and nothing that must stay") {
            store async throws in
            // Seven of each kind to go with a batch of two: each delete needs four transactions. One of each kind stays.
            let backlog = 0..<7
            func insert(_ statement: SQLQueryString) async throws {
                try await store.database.transaction { sql in try await sql.raw(statement).run() }
            }
            func newUser() async throws -> String {
                let user = newID()
                #expect(try await store.registerUser(id: user, kind: .device, at: at(0)))
                return user
            }
            func address(of user: String, verified: Bool = false, attached: Bool = false) async throws {
                let email = newID() + "@example.com"
                try await insert(
                    """
                    INSERT INTO email_accounts (user_id, email, email_key, password_hash, verified_at, created_at, password_changed_at, attached)
                    VALUES (\(bind: user), \(bind: email), \(bind: email), 'hash', \(bind: verified ? at(1).stored : nil), \(bind: at(0).stored),
                        \(bind: at(0).stored), \(bind: attached ? 1 : 0))
                    """)
            }
            func code(for user: String, expiresAt: Date) async throws {
                try await insert(
                    """
                    INSERT INTO email_codes (user_id, purpose, code_hash, link_hash, attempts, created_at, expires_at)
                    VALUES (\(bind: user), 'verify', 'code', \(bind: newID()), 0, \(bind: at(0).stored), \(bind: expiresAt.stored))
                    """)
            }
            func mail(sentAt: Date?) async throws {
                try await insert(
                    """
                    INSERT INTO outbox (recipient, purpose, message_id, created_at, next_attempt_at, attempts, sent_at)
                    VALUES ('someone@example.com', 'verify', \(bind: newID()), \(bind: at(0).stored), \(bind: at(0).stored), 0,
                        \(bind: sentAt?.stored))
                    """)
            }
            // Rate-limit hits past their policy's window, and one within it.
            for second in backlog { _ = try await store.recordHit(bucket: "short:a", limit: 100, window: 3600, now: at(Double(second))) }
            _ = try await store.recordHit(bucket: "short:b", limit: 100, window: 3600, now: at(990))
            // A live session's spent refresh tokens: all but the newest spent go.
            let (_, chained) = try await registerDevice(store)
            var presented = chained.refreshTokenHash
            for second in 1...8 {
                let next = "hash-" + newID()
                _ = try await store.rotateRefreshToken(
                    sessionID: chained.id, presentedHash: presented, successorHash: next, successorExpiresAt: at(100_000), now: at(Double(second)),
                    graceWindow: 10)
                presented = next
            }
            // Sessions whose refresh token expired (the token goes, then the session), and sessions revoked long ago (each
            // revocation a feed entry: all but the newest go).
            let owner = try await newUser()
            for _ in backlog { try await store.createSession(newSession(user: owner, at: at(0), expiresIn: 100)) }
            for _ in backlog {
                let (_, session) = try await registerDevice(store)
                #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(0)))
            }
            _ = try await store.revokeSession(id: try await registerDevice(store).session.id, reason: "test", at: at(0))
            // Spent nonces and DPoP proofs past their expiry, one of each not.
            for index in 0..<8 {
                _ = try await store.completeSignIn(
                    appleIdentity(), linkingTo: nil, newUserID: newID(),
                    nonce: SpentNonce(hash: "nonce-\(index)", expiresAt: index == 7 ? at(10_000) : at(50)),
                    session: newSession(user: "", at: at(0), expiresIn: 100_000), now: at(0))
                var proven = newSession(user: owner, at: at(0), expiresIn: 100_000)
                proven.proof = proof("key", jti: "proof-\(index)", expiresAt: index == 7 ? at(10_000) : at(50))
                try await store.createSession(proven)
            }
            // Sent mails (one sent lately, one pending), expired email codes (one live).
            for _ in backlog { try await mail(sentAt: at(10)) }
            try await mail(sentAt: at(990))
            try await mail(sentAt: nil)
            for _ in backlog { try await code(for: try await newUser(), expiresAt: at(50)) }
            let coded = try await newUser()
            try await code(for: coded, expiresAt: at(10_000))
            // Abandoned registrations, their users with them; and those that stay: one with a live code, one attached to an
            // existing user, one verified, and one whose user has a device (only the address goes).
            var abandoned: [String] = []
            for _ in backlog {
                let user = try await newUser()
                try await address(of: user)
                abandoned.append(user)
            }
            try await address(of: coded)
            let attached = try await newUser()
            try await address(of: attached, attached: true)
            let verified = try await newUser()
            try await address(of: verified, verified: true)
            let device = try await registerDevice(store).device
            try await address(of: device.userID)

            let rules = PruneRules(
                now: at(1000), hitWindows: ["short": 60], hitsBefore: at(-3600), spentTokensBefore: at(990), sessionsBefore: at(500),
                feedBefore: at(500), sentMailBefore: at(500), unverifiedAccountsBefore: at(500), batchSize: 2)
            let counts = try await store.prune(rules)
            #expect(counts.rateLimitHits == 7)
            #expect(counts.refreshTokens == 7 + 7)  // the expired ones, and seven of the eight spent: the newest stays for its lost answer
            #expect(counts.sessions == 7 + 8)
            #expect(counts.nonces == 7)
            #expect(counts.proofs == 7)
            #expect(counts.revocations == 7)
            #expect(counts.sentMails == 7)
            #expect(counts.emailCodes == 7)
            #expect(counts.users == 7)
            #expect(counts.unverifiedAccounts == 7 + 1)
            // What must stay, stays.
            func rows(_ table: String, _ condition: SQLQueryString = "1 = 1") async throws -> Int {
                try await store.database.transaction { sql in
                    try await sql.raw("SELECT COUNT(*) AS n FROM \(ident: table) WHERE \(condition)").first()?.decode(column: "n", as: Int.self) ?? -1
                }
            }
            #expect(try await rows("rate_limit_hits") == 1)
            #expect(try await store.isRefreshTokenSpent(sessionID: chained.id, hash: presented) == false)
            #expect(try await rows("refresh_tokens", "session_id = \(bind: chained.id)") == 2)
            #expect(try await store.session(id: chained.id)?.revokedAt == nil)
            #expect(try await rows("used_nonces") == 1)
            #expect(try await rows("dpop_proofs") == 1)
            #expect(try await rows("revocations") == 1)
            #expect(try await rows("outbox") == 2)
            #expect(try await rows("email_codes") == 1)
            for user in abandoned { #expect(try await store.user(id: user) == nil) }
            for user in [coded, attached, verified, device.userID] { #expect(try await store.user(id: user) != nil) }
            #expect(try await rows("email_accounts") == 3)
            #expect(try await rows("email_accounts", "user_id = \(bind: device.userID)") == 0)
            // A second pass finds nothing.
            #expect(try await store.prune(rules).total == 0)
        },
        StoreContract("pruning removes spent refresh tokens past the grace window, but never the one whose successor is unused") {
            store async throws in
            let (_, session) = try await registerDevice(store)
            var chain = [session.refreshTokenHash]
            for second in [10.0, 25, 30] {
                let next = "hash-" + newID()
                #expect(
                    try await store.rotateRefreshToken(
                        sessionID: session.id, presentedHash: chain.last!, successorHash: next, successorExpiresAt: at(100_000), now: at(second),
                        graceWindow: 10) == .rotated(record(session)))
                chain.append(next)
            }
            // At 33 with a grace of 10: the token spent at 10 goes; the one spent at 25 is within grace; the one spent at 30
            // is the newest spent (its successor unused: an answer that may have been lost).
            #expect(
                try await store.prune(PruneRules(now: at(33), hitsBefore: at(0), spentTokensBefore: at(23), sessionsBefore: at(0), feedBefore: at(0)))
                    .refreshTokens == 1)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: chain[0]) == nil)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: chain[1]) == true)
            // A day later only the newest spent token and its unused successor are left, and the lost answer is still given.
            #expect(
                try await store.prune(
                    PruneRules(now: at(86_400), hitsBefore: at(0), spentTokensBefore: at(86_390), sessionsBefore: at(0), feedBefore: at(0))
                ).refreshTokens == 1)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: chain[1]) == nil)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: chain[2], successorHash: chain[3], successorExpiresAt: at(100_000), now: at(86_400),
                    graceWindow: 10) == .unclaimedSuccessor(record(session)))
            #expect(try await store.session(id: session.id)?.revokedAt == nil)
        },
    ]

    // MARK: Users

    static let users: [StoreContract] = [
        StoreContract("users: the profile is one read of what the separate reads return (devices and identities oldest first, budget)") {
            store async throws in
            let (first, _) = try await registerDevice(store, at: at(5))
            let user = first.userID
            var devices = [first]
            // More devices of the same user (the stores attach none; a fixture writes them), older and newer.
            for time in [at(1), at(9)] {
                let device = DeviceRecord(id: newID(), userID: user, secretHash: "secret-" + newID(), createdAt: time, lastSeenAt: nil)
                try await store.database.transaction { sql in
                    try await sql.raw(
                        """
                        INSERT INTO devices (id, user_id, secret_hash, created_at, last_seen_at, key_thumbprint)
                        VALUES (\(bind: device.id), \(bind: user), \(bind: device.secretHash), \(bind: time.timeIntervalSince1970), NULL, 'tp')
                        """
                    ).run()
                }
                devices.append(
                    DeviceRecord(id: device.id, userID: user, secretHash: device.secretHash, createdAt: time, lastSeenAt: nil, keyThumbprint: "tp"))
            }
            for (provider, time) in [("apple", at(8)), ("clerk", at(3))] {
                var identity = appleIdentity()
                identity.provider = provider
                identity.createdAt = time
                let linked = try await store.completeSignIn(
                    identity, linkingTo: user, newUserID: newID(), nonce: nil, session: newSession(user: "", at: time), now: time
                ).0
                #expect(linked == .existing(userID: user))
            }
            #expect(try await store.setBudgetLimit(ofUser: user, to: 7))
            for (key, amount, time) in [("old", 1.0, at(2)), ("a", 2.5, at(4)), ("b", 0.25, at(6))] {
                #expect(try await store.recordUsage(userID: user, amount: amount, idempotencyKey: key, limit: 7, since: at(0), at: time) == .recorded)
            }
            let (other, _) = try await registerDevice(store, at: at(4))  // nothing of another user's may show

            let profile = try #require(try await store.profile(ofUser: user, usageSince: at(3)))
            let state = try await store.budgetState(ofUser: user, since: at(3))
            let separately = UserProfileRecord(
                user: try #require(try await store.user(id: user)), devices: try await store.devices(ofUser: user),
                identities: try await store.identities(ofUser: user), budgetLimit: state.limit, usedBudget: state.used)
            #expect(profile == separately)
            #expect(profile.devices == devices.sorted { $0.createdAt < $1.createdAt })
            #expect(profile.identities.map(\.provider) == ["clerk", "apple"])
            #expect(profile.budgetLimit == 7 && profile.usedBudget == 2.75)

            let alone = try #require(try await store.profile(ofUser: other.userID, usageSince: at(0)))
            #expect(
                alone
                    == UserProfileRecord(
                        user: try #require(try await store.user(id: other.userID)), devices: [other], identities: [], budgetLimit: nil, usedBudget: 0)
            )
            let bare = newID()
            #expect(try await store.registerUser(id: bare, kind: .federated, at: at(2)))
            #expect(
                try await store.profile(ofUser: bare, usageSince: at(0))
                    == UserProfileRecord(
                        user: UserRecord(id: bare, kind: .federated, createdAt: at(2)), devices: [], identities: [], budgetLimit: nil, usedBudget: 0))
        },
        StoreContract("users: register creates once, read back with kind and time") { store async throws in
            let id = newID()
            #expect(try await store.user(id: id) == nil)
            #expect(try await store.registerUser(id: id, kind: .federated, at: at(5)))
            #expect(try await store.user(id: id) == UserRecord(id: id, kind: .federated, createdAt: at(5)))
            // A second registration changes nothing.
            #expect(try await store.registerUser(id: id, kind: .device, at: at(9)) == false)
            #expect(try await store.user(id: id) == UserRecord(id: id, kind: .federated, createdAt: at(5)))
        },
        StoreContract("users: list orders by creation time then ID, with limit and offset") { store async throws in
            // IDs in the reverse order of their creation times, so ordering by ID alone would fail.
            let ids = (0..<3).map { _ in newID() }.sorted(by: >)
            for (index, id) in ids.enumerated() {
                #expect(try await store.registerUser(id: id, kind: .device, at: at(Double(index))))
            }
            // Two users created at the same time come in ID order.
            let tied = ["ffffffff-0000-4000-8000-000000000002", "ffffffff-0000-4000-8000-000000000001"]
            for id in tied { #expect(try await store.registerUser(id: id, kind: .device, at: at(10))) }
            let expected = ids + tied.sorted()
            #expect(try await store.users(limit: 100, offset: 0).map(\.id) == expected)
            #expect(try await store.users(limit: 2, offset: 1).map(\.id) == Array(expected[1...2]))
            #expect(try await store.users(limit: 10, offset: 5).isEmpty)
        },
        StoreContract("users: delete cascades devices, sessions and access codes, and only the user's own") { store async throws in
            let (device, session) = try await registerDevice(store)
            let second = newSession(user: device.userID, device: device.id, at: at(1))
            try await store.createSession(second)
            let code = accessCode(user: device.userID, at: at(2))
            try await store.insertAccessCode(code)
            // A bystander whose rows must survive.
            let (otherDevice, otherSession) = try await registerDevice(store)
            let otherCode = accessCode(user: otherDevice.userID, at: at(3))
            try await store.insertAccessCode(otherCode)
            let before = try await store.latestRevocationSequence()

            let deleted = try #require(try await store.deleteUser(id: device.userID, at: at(20)))
            #expect(deleted.userID == device.userID)
            #expect(Set(deleted.sessionIDs) == [session.id, second.id])
            #expect(deleted.sessionIDs.count == 2)
            #expect(deleted.accessCodeIDs == [code.id])

            #expect(try await store.user(id: device.userID) == nil)
            #expect(try await store.device(id: device.id) == nil)
            #expect(try await store.devices(ofUser: device.userID).isEmpty)
            #expect(try await store.profile(ofUser: device.userID, usageSince: at(0)) == nil)
            #expect(try await store.session(id: session.id) == nil)
            #expect(try await store.session(id: second.id) == nil)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == nil)
            #expect(try await store.accessCode(id: code.id) == nil)
            // The deletion is in the feed, for other processes' caches.
            let entries = try await store.revocations(after: before, limit: 100)
            #expect(entries.map(\.scope) == [.user])
            #expect(entries.map(\.value) == [device.userID])

            #expect(try await store.user(id: otherDevice.userID) != nil)
            #expect(try await store.device(id: otherDevice.id) == otherDevice)
            #expect(try await store.session(id: otherSession.id) == record(otherSession))
            #expect(try await store.accessCode(id: otherCode.id) == otherCode)
            #expect(try await store.accessCodes() == [otherCode])
        },
        StoreContract("users: deleting an unknown or already deleted user returns nil and records nothing") { store async throws in
            #expect(try await store.deleteUser(id: newID(), at: at(1)) == nil)
            let id = newID()
            #expect(try await store.registerUser(id: id, kind: .device, at: at(0)))
            #expect(try await store.deleteUser(id: id, at: at(1)) == DeletedUser(userID: id, sessionIDs: [], accessCodeIDs: []))
            let latest = try await store.latestRevocationSequence()
            #expect(try await store.deleteUser(id: id, at: at(2)) == nil)
            #expect(try await store.latestRevocationSequence() == latest)
        },
    ]

    // MARK: Devices

    static let devices: [StoreContract] = [
        StoreContract("devices: registering creates the device user, the device (last seen = created) and its session") { store async throws in
            let (device, session) = try await registerDevice(store, at: at(7))
            #expect(device.lastSeenAt == at(7))
            #expect(try await store.device(id: device.id) == device)
            #expect(try await store.user(id: device.userID) == UserRecord(id: device.userID, kind: .device, createdAt: at(7)))
            #expect(try await store.devices(ofUser: device.userID) == [device])
            let profile = try #require(try await store.profile(ofUser: device.userID, usageSince: at(0)))
            #expect(profile.user.id == device.userID)
            #expect(profile.devices == [device])
            #expect(profile.identities.isEmpty)
            #expect(try await store.session(id: session.id) == record(session))
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == false)
        },
        StoreContract("devices: unknown device and user lookups are empty") { store async throws in
            _ = try await registerDevice(store)
            let unknown = newID()
            #expect(try await store.device(id: unknown) == nil)
            #expect(try await store.devices(ofUser: unknown).isEmpty)
            #expect(try await store.profile(ofUser: unknown, usageSince: at(0)) == nil)
        },
        StoreContract("devices: a duplicate device ID exists already and writes nothing") { store async throws in
            let (device, _) = try await registerDevice(store)
            // Same device ID under a fresh user ID: the user insert would succeed, the device insert conflicts.
            let otherUser = newID()
            let duplicate = DeviceRecord(id: device.id, userID: otherUser, secretHash: "other", createdAt: at(1), lastSeenAt: at(1))
            let session = newSession(user: otherUser, device: device.id, at: at(1))
            #expect(try await store.registerNewDevice(duplicate, session: session) == .exists)
            // All or nothing: neither the user nor the session of the failed registration exists.
            #expect(try await store.user(id: otherUser) == nil)
            #expect(try await store.session(id: session.id) == nil)
            #expect(try await store.device(id: device.id) == device)
        },
        StoreContract("devices: registering an existing user's ID again exists already") { store async throws in
            let (device, _) = try await registerDevice(store)
            let again = DeviceRecord(id: device.id, userID: device.userID, secretHash: "again", createdAt: at(1), lastSeenAt: at(1))
            #expect(try await store.registerNewDevice(again, session: newSession(user: device.userID, device: device.id, at: at(1))) == .exists)
            #expect(try await store.device(id: device.id)?.secretHash == device.secretHash)
        },
        StoreContract("devices: a deleted user's ID is retired until support frees it") { store async throws in
            let (device, _) = try await registerDevice(store)
            #expect(try await store.deleteUser(id: device.userID, at: at(5)) != nil)
            #expect(try await store.deletedAt(userID: device.userID) == at(5))
            let again = DeviceRecord(id: device.id, userID: device.userID, secretHash: "again", createdAt: at(6), lastSeenAt: at(6))
            let session = newSession(user: device.userID, device: device.id, at: at(6))
            #expect(try await store.registerNewDevice(again, session: session) == .deletedID)
            #expect(try await store.registerUser(id: device.userID, kind: .device, at: at(6)) == false)
            #expect(try await store.user(id: device.userID) == nil)
            #expect(try await store.session(id: session.id) == nil)
            #expect(try await store.freeDeletedID(device.userID))
            #expect(try await store.freeDeletedID(device.userID) == false)
            #expect(try await store.registerNewDevice(again, session: session) == .created)
        },
        StoreContract("devices: a keyless device signing in with a proof is bound to its key from then on") { store async throws in
            let (device, _) = try await registerDevice(store)
            var session = newSession(user: device.userID, device: device.id, at: at(10))
            session.proof = proof("key-a")
            try await store.signInDevice(device.id, session: session)
            #expect(try await store.device(id: device.id)?.keyThumbprint == "key-a")
            #expect(try await store.device(id: device.id)?.lastSeenAt == at(10))
            #expect(try await store.session(id: session.id)?.dpopThumbprint == "key-a")
            // A bound device keeps its key: a later sign-in with another proof does not replace it.
            var other = newSession(user: device.userID, device: device.id, at: at(11))
            other.proof = proof("key-b")
            try await store.signInDevice(device.id, session: other)
            #expect(try await store.device(id: device.id)?.keyThumbprint == "key-a")
        },
        StoreContract("devices: support's reset replaces the secret, forgets the key and revokes the device's sessions") { store async throws in
            let (device, first) = try await registerDevice(store)
            var bound = newSession(user: device.userID, device: device.id, at: at(1))
            bound.proof = proof("key-a")
            try await store.signInDevice(device.id, session: bound)
            let before = try await store.latestRevocationSequence()
            let revoked = try #require(try await store.resetDevice(id: device.id, secretHash: "new-secret", at: at(2)))
            #expect(Set(revoked) == [first.id, bound.id])
            let reset = try await store.device(id: device.id)
            #expect(reset?.secretHash == "new-secret")
            #expect(reset?.keyThumbprint == nil)
            #expect(try await store.revocations(after: before, limit: 10).count == 2)
            #expect(try await store.resetDevice(id: newID(), secretHash: "x", at: at(3)) == nil)
        },
    ]

    // MARK: Sessions

    static let sessions: [StoreContract] = [
        StoreContract("sessions: create and read; unknown session is nil; session of unknown user is a conflict") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let session = newSession(user: user, at: at(3))
            try await store.createSession(session)
            #expect(try await store.session(id: session.id) == record(session))
            #expect(try await store.session(id: newID()) == nil)
            await #expect(throws: StoreError.conflict) {
                try await store.createSession(newSession(user: newID()))
            }
            await #expect(throws: StoreError.conflict) {
                try await store.createSession(session)
            }
        },
        StoreContract("sessions: rotate first use; a lost answer is given again; reuse after a descendant was used revokes") { store async throws in
            let (_, session) = try await registerDevice(store)
            let successor = "hash-" + newID()
            func present(_ hash: String, successor: String, at time: Double) async throws -> RefreshRotation {
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: hash, successorHash: successor, successorExpiresAt: at(time + 3600), now: at(time),
                    graceWindow: 10)
            }
            #expect(try await present(session.refreshTokenHash, successor: successor, at: 100) == .rotated(record(session)))
            // The refresh marks the device as seen.
            if let deviceID = session.deviceID {
                #expect(try await store.devices(ofUser: session.userID).first { $0.id == deviceID }?.lastSeenAt == at(100))
            } else {
                Issue.record("registerDevice made a session without a device")
            }
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == true)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: successor) == false)

            // Its successor never used: the first answer was lost, so the same successor stands, at any time.
            #expect(try await present(session.refreshTokenHash, successor: successor, at: 105) == .unclaimedSuccessor(record(session)))
            #expect(try await present(session.refreshTokenHash, successor: successor, at: 3000) == .unclaimedSuccessor(record(session)))
            #expect(try await store.session(id: session.id)?.revokedAt == nil)

            // The successor is used at 3001; the first token presented again within 10 s of its own first use would be
            // within grace, but that was at 100: it is reuse now, and the session is revoked and in the feed.
            let next = "hash-" + newID()
            #expect(try await present(successor, successor: next, at: 3001) == .rotated(record(session)))
            let before = try await store.latestRevocationSequence()
            #expect(try await present(session.refreshTokenHash, successor: successor, at: 3002) == .reuseDetected(record(session)))
            #expect(try await store.session(id: session.id)?.revokedAt == at(3002))
            let entries = try await store.revocations(after: before, limit: 100)
            #expect(entries.map(\.scope) == [.session])
            #expect(entries.map(\.value) == [session.id])

            // The revoked session's live successor is dead too.
            #expect(try await present(next, successor: "hash-" + newID(), at: 3003) == .invalid)
        },
        StoreContract("sessions: a spent token whose successor was used is within grace for 10 s of its first use") { store async throws in
            let (_, session) = try await registerDevice(store)
            let successor = "hash-" + newID()
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: successor, successorExpiresAt: at(3600),
                    now: at(100), graceWindow: 10) == .rotated(record(session)))
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: successor, successorHash: "hash-" + newID(), successorExpiresAt: at(3600),
                    now: at(101), graceWindow: 10) == .rotated(record(session)))
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: successor, successorExpiresAt: at(3600),
                    now: at(110), graceWindow: 10) == .withinGrace(record(session)))
            #expect(try await store.session(id: session.id)?.revokedAt == nil)
        },
        StoreContract("sessions: a bound session refreshes only with a proof of its key, and a proof is accepted once") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            var session = newSession(user: user, at: at(0))
            session.proof = proof("key-a")
            try await store.createSession(session)
            #expect(try await store.session(id: session.id)?.dpopThumbprint == "key-a")
            func present(_ presented: VerifiedProof?, requireProof: Bool = false) async throws -> RefreshRotation {
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(1), graceWindow: 10, proof: presented, requireProof: requireProof)
            }
            // No proof, or another key's: refused, and nothing spent.
            #expect(try await present(nil) == .proofRequired(record(session)))
            #expect(try await present(proof("key-b")) == .proofRequired(record(session)))
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == false)
            // The key's proof rotates; the same proof again is a replay, refused before anything is spent.
            let once = proof("key-a")
            #expect(try await present(once) == .rotated(record(session)))
            await #expect(throws: DPoPRejection.replayed) { try await present(once) }
        },
        StoreContract("sessions: a keyless session is bound by its first proof; required proofs refuse keyless refreshes") { store async throws in
            let (_, session) = try await registerDevice(store)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: "hash-" + newID(), successorExpiresAt: at(3600),
                    now: at(1), graceWindow: 10, proof: nil, requireProof: true) == .proofRequired(record(session)))
            let successor = "hash-" + newID()
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: successor, successorExpiresAt: at(3600),
                    now: at(2), graceWindow: 10, proof: proof("key-a"), requireProof: false) == .rotated(record(session)))
            #expect(try await store.session(id: session.id)?.dpopThumbprint == "key-a")
            var bound = record(session)
            bound.dpopThumbprint = "key-a"
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: successor, successorHash: "hash-" + newID(), successorExpiresAt: at(3600),
                    now: at(3), graceWindow: 10) == .proofRequired(bound))
        },
        StoreContract("sessions: creating a session with a proof already spent writes nothing") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let spent = proof("key-a")
            var first = newSession(user: user, at: at(0))
            first.proof = spent
            try await store.createSession(first)
            var second = newSession(user: user, at: at(1))
            second.proof = spent
            await #expect(throws: DPoPRejection.replayed) { try await store.createSession(second) }
            #expect(try await store.session(id: second.id) == nil)
        },
        StoreContract("sessions: the successor of a rotation rotates in turn") { store async throws in
            let (_, session) = try await registerDevice(store)
            let successor = "hash-" + newID()
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: successor,
                    successorExpiresAt: at(3600), now: at(10), graceWindow: 10) == .rotated(record(session)))
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: successor, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(20), graceWindow: 10) == .rotated(record(session)))
        },
        StoreContract("sessions: an unknown hash, or a hash of another session, is invalid") { store async throws in
            let (_, session) = try await registerDevice(store)
            let (_, other) = try await registerDevice(store)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: "hash-" + newID(), successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(1), graceWindow: 10) == .invalid)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: other.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(1), graceWindow: 10) == .invalid)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: newID(), presentedHash: session.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(1), graceWindow: 10) == .invalid)
            // None of that spent the real token.
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == false)
            #expect(try await store.isRefreshTokenSpent(sessionID: other.id, hash: other.refreshTokenHash) == false)
        },
        StoreContract("sessions: an expired refresh token is invalid, one about to expire is not") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .device, at: at(0)))
            let expiring = newSession(user: user, at: at(0), expiresIn: 100)
            try await store.createSession(expiring)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: expiring.id, presentedHash: expiring.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(100), graceWindow: 10) == .invalid)
            #expect(try await store.isRefreshTokenSpent(sessionID: expiring.id, hash: expiring.refreshTokenHash) == false)
            let live = newSession(user: user, at: at(0), expiresIn: 100)
            try await store.createSession(live)
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: live.id, presentedHash: live.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(99), graceWindow: 10) == .rotated(record(live)))
        },
        StoreContract("sessions: a revoked session's refresh token is invalid") { store async throws in
            let (_, session) = try await registerDevice(store)
            #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(5)))
            #expect(
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: "hash-" + newID(),
                    successorExpiresAt: at(3600), now: at(6), graceWindow: 10) == .invalid)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == false)
        },
        StoreContract("sessions: revokeSessions(ofUser:keeping:) returns exactly the revoked IDs and keeps one live") { store async throws in
            let (device, first) = try await registerDevice(store)
            let second = newSession(user: device.userID, device: device.id, at: at(1))
            let third = newSession(user: device.userID, at: at(2))
            let alreadyRevoked = newSession(user: device.userID, at: at(3))
            for session in [second, third, alreadyRevoked] { try await store.createSession(session) }
            #expect(try await store.revokeSession(id: alreadyRevoked.id, reason: "earlier", at: at(4)))
            let (_, bystander) = try await registerDevice(store)
            let before = try await store.latestRevocationSequence()

            let revoked = try await store.revokeSessions(ofUser: device.userID, keeping: second.id, reason: "logout_others", at: at(10))
            #expect(revoked.sorted() == [first.id, third.id].sorted())
            #expect(try await store.session(id: first.id)?.revokedAt == at(10))
            #expect(try await store.session(id: third.id)?.revokedAt == at(10))
            #expect(try await store.session(id: second.id)?.revokedAt == nil)
            #expect(try await store.session(id: alreadyRevoked.id)?.revokedAt == at(4))
            #expect(try await store.session(id: bystander.id)?.revokedAt == nil)
            let entries = try await store.revocations(after: before, limit: 100)
            #expect(entries.allSatisfy { $0.scope == .session })
            #expect(entries.map(\.value).sorted() == revoked.sorted())

            // Nothing left to revoke but the kept one.
            #expect(try await store.revokeSessions(ofUser: device.userID, keeping: second.id, reason: "again", at: at(11)).isEmpty)
            #expect(try await store.revokeSessions(ofUser: device.userID, keeping: nil, reason: "logout_global", at: at(12)) == [second.id])
            #expect(try await store.session(id: second.id)?.revokedAt == at(12))
            #expect(try await store.revokeSessions(ofUser: newID(), keeping: nil, reason: "nobody", at: at(13)).isEmpty)
            #expect(try await store.session(id: bystander.id)?.revokedAt == nil)
        },
        StoreContract("sessions: revokeSession is true once, then false; unknown is false") { store async throws in
            let (_, session) = try await registerDevice(store)
            let before = try await store.latestRevocationSequence()
            #expect(try await store.revokeSession(id: session.id, reason: "logout", at: at(5)))
            #expect(try await store.session(id: session.id)?.revokedAt == at(5))
            let latest = try await store.latestRevocationSequence()
            #expect(latest > before)
            #expect(try await store.revokeSession(id: session.id, reason: "logout", at: at(6)) == false)
            #expect(try await store.session(id: session.id)?.revokedAt == at(5))
            #expect(try await store.revokeSession(id: newID(), reason: "logout", at: at(6)) == false)
            // Neither no-op added to the feed.
            #expect(try await store.latestRevocationSequence() == latest)
        },
    ]

    static let sessionConcurrency: [StoreContract] = [
        StoreContract("sessions (concurrent): 20 rotations of one token give exactly one .rotated, the rest .withinGrace") { store async throws in
            let (_, session) = try await registerDevice(store)
            let results = try await concurrently(20) { index in
                try await store.rotateRefreshToken(
                    sessionID: session.id, presentedHash: session.refreshTokenHash, successorHash: "hash-\(index)-" + newID(),
                    successorExpiresAt: at(3600), now: at(50), graceWindow: 10)
            }
            #expect(results.count == 20)
            #expect(results.filter { $0 == .rotated(record(session)) }.count == 1)
            #expect(results.filter { $0 == .withinGrace(record(session)) }.count == 19)
            #expect(try await store.session(id: session.id)?.revokedAt == nil)
            #expect(try await store.isRefreshTokenSpent(sessionID: session.id, hash: session.refreshTokenHash) == true)
        }
    ]

    // MARK: Access codes

    static let accessCodes: [StoreContract] = [
        StoreContract("access codes: insert, read, list in creation order, and one user's newest first") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let later = accessCode(user: user, at: at(20), note: "ci")
            let earlier = accessCode(user: user, at: at(10))
            try await store.insertAccessCode(later)
            try await store.insertAccessCode(earlier)
            #expect(try await store.accessCode(id: later.id) == later)
            #expect(try await store.accessCode(id: earlier.id) == earlier)
            #expect(try await store.accessCode(id: newID()) == nil)
            #expect(try await store.accessCodes() == [earlier, later])
            let other = newID()
            #expect(try await store.registerUser(id: other, kind: .federated, at: at(0)))
            try await store.insertAccessCode(accessCode(user: other, at: at(15)))
            #expect(try await store.accessCodes(ofUser: user) == [later, earlier])
            #expect(try await store.accessCodes(ofUser: newID()).isEmpty)
        },
        StoreContract("access codes: duplicate ID or unknown user is a conflict") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let code = accessCode(user: user, at: at(1))
            try await store.insertAccessCode(code)
            await #expect(throws: StoreError.conflict) { try await store.insertAccessCode(code) }
            await #expect(throws: StoreError.conflict) { try await store.insertAccessCode(accessCode(user: newID(), at: at(2))) }
            #expect(try await store.accessCodes() == [code])
        },
        StoreContract("access codes: revoking a code ends the sessions exchanged from it, and only those") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let code = accessCode(user: user, at: at(1))
            try await store.insertAccessCode(code)
            var exchanged = newSession(user: user, at: at(2))
            exchanged.accessCodeID = code.id
            try await store.createSession(exchanged)
            let other = newSession(user: user, at: at(2))
            try await store.createSession(other)
            let before = try await store.latestRevocationSequence()
            let result = try #require(try await store.revokeAccessCode(id: code.id, at: at(3)))
            #expect(result.revokedSessions == [exchanged.id])
            #expect(try await store.session(id: exchanged.id)?.revokedAt == at(3))
            #expect(try await store.session(id: other.id)?.revokedAt == nil)
            #expect(try await store.revocations(after: before, limit: 10).map(\.value) == [exchanged.id])
        },
        StoreContract("access codes: revoke stamps the first revocation time; unknown is nil") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let code = accessCode(user: user, at: at(1))
            let other = accessCode(user: user, at: at(2))
            try await store.insertAccessCode(code)
            try await store.insertAccessCode(other)
            var revoked = code
            revoked.revokedAt = at(30)
            #expect(try await store.revokeAccessCode(id: code.id, at: at(30))?.code == revoked)
            #expect(try await store.accessCode(id: code.id) == revoked)
            // Revoking again keeps the first time.
            #expect(try await store.revokeAccessCode(id: code.id, at: at(40))?.code == revoked)
            #expect(try await store.accessCode(id: other.id)?.revokedAt == nil)
            #expect(try await store.accessCodes() == [revoked, other])
            #expect(try await store.revokeAccessCode(id: newID(), at: at(50)) == nil)
        },
    ]

    // MARK: Signing keys and settings

    static let signingKeys: [StoreContract] = [
        StoreContract("signing keys: activating a key retires every earlier active key") { store async throws in
            #expect(try await store.signingKeys().isEmpty)
            let first = signingKey(at: at(10))
            try await store.activateSigningKey(first)
            #expect(try await store.signingKeys() == [first])

            let second = signingKey(at: at(20))
            try await store.activateSigningKey(second)
            var firstRetired = first
            firstRetired.retiredAt = at(20)
            #expect(try await store.signingKeys() == [firstRetired, second])

            let third = signingKey(at: at(30))
            try await store.activateSigningKey(third)
            var secondRetired = second
            secondRetired.retiredAt = at(30)
            // An already retired key keeps its retirement time.
            #expect(try await store.signingKeys() == [firstRetired, secondRetired, third])
            #expect(try await store.signingKeys().filter { $0.retiredAt == nil }.map(\.kid) == [third.kid])
        },
        StoreContract("signing keys: a duplicate kid is a conflict and retires nothing") { store async throws in
            let key = signingKey(at: at(10))
            try await store.activateSigningKey(key)
            var again = signingKey(at: at(20))
            again.kid = key.kid
            await #expect(throws: StoreError.conflict) { try await store.activateSigningKey(again) }
            #expect(try await store.signingKeys() == [key])
        },
        StoreContract("signing keys (concurrent): ten first keys at once make exactly one active key; rotations keep one") { store async throws in
            let keys = (0..<10).map { _ in signingKey(at: at(10)) }
            let made = try await withThrowingTaskGroup(of: Bool.self) { group in
                for key in keys { group.addTask { try await store.activateFirstSigningKey(key) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(made == 1)
            #expect(try await store.signingKeys().count == 1)
            #expect(try await store.activateFirstSigningKey(signingKey(at: at(11))) == false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<5 { group.addTask { try await store.activateSigningKey(signingKey(at: at(20 + Double(index)))) } }
                try await group.waitForAll()
            }
            #expect(try await store.signingKeys().count == 6)
            #expect(try await store.signingKeys().filter { $0.retiredAt == nil }.count == 1)
        },
        StoreContract("settings: unknown is nil, set, overwrite, read; names are independent") { store async throws in
            #expect(try await store.setting("issuer") == nil)
            try await store.setSetting("issuer", to: "http://a.test")
            try await store.setSetting("other", to: "x")
            #expect(try await store.setting("issuer") == "http://a.test")
            try await store.setSetting("issuer", to: "http://b.test")
            #expect(try await store.setting("issuer") == "http://b.test")
            #expect(try await store.setting("other") == "x")
            #expect(try await store.setting("missing") == nil)
        },
    ]

    // MARK: Rate limits

    static let rateLimits: [StoreContract] = [
        StoreContract("rate limits: exactly `limit` hits in the window, then denied until the oldest leaves") { store async throws in
            let bucket = "login " + newID()
            for (second, remaining) in [(0.0, 2), (1.0, 1), (2.0, 0)] {
                let decision = try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(second))
                guard case .allowed(_, let left, let resetAt) = decision else {
                    Issue.record("hit at +\(second)s was \(decision), expected allowed")
                    continue
                }
                #expect(left == remaining)
                #expect(resetAt == at(60))
            }
            #expect(try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(3)) == .denied(resetAt: at(60)))
            #expect(try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(59)) == .denied(resetAt: at(60)))
            // Another bucket is not affected.
            #expect(try await store.recordHit(bucket: "other " + newID(), limit: 3, window: 60, now: at(3)).remaining == 2)
            // At +60s the hit of +0s has left the window: one slot, freed next by the hit of +1s.
            let afterWindow = try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(60))
            guard case .allowed(_, let left, let resetAt) = afterWindow else {
                Issue.record("hit after the window was \(afterWindow), expected allowed")
                return
            }
            #expect(left == 0)
            #expect(resetAt == at(61))
            #expect(try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(60)) == .denied(resetAt: at(61)))
            // Long after, the whole window is free again.
            let fresh = try await store.recordHit(bucket: bucket, limit: 3, window: 60, now: at(1000))
            #expect(fresh.remaining == 2)
        },
        StoreContract("rate limits: removeHit gives the slot back") { store async throws in
            let bucket = "register " + newID()
            var hitIDs: [String] = []
            for second in 0..<2 {
                let decision = try await store.recordHit(bucket: bucket, limit: 2, window: 60, now: at(Double(second)))
                hitIDs.append(try #require(decision.hitID))
            }
            #expect(try await store.recordHit(bucket: bucket, limit: 2, window: 60, now: at(5)) == .denied(resetAt: at(60)))
            // Removing an unknown hit, or a hit from another bucket, gives nothing back.
            try await store.removeHit(bucket: bucket, hitID: newID())
            try await store.removeHit(bucket: "other", hitID: hitIDs[0])
            #expect(try await store.recordHit(bucket: bucket, limit: 2, window: 60, now: at(5)) == .denied(resetAt: at(60)))
            try await store.removeHit(bucket: bucket, hitID: hitIDs[0])
            let again = try await store.recordHit(bucket: bucket, limit: 2, window: 60, now: at(6))
            #expect(again.remaining == 0)
            // The oldest hit left is the one of +1s.
            #expect(again.resetAt == at(61))
            #expect(try await store.recordHit(bucket: bucket, limit: 2, window: 60, now: at(7)) == .denied(resetAt: at(61)))
        },
        StoreContract("rate limits: hits counts the window's hits and its oldest without recording one") { store async throws in
            let bucket = "failures " + newID()
            #expect(try await store.hits(bucket: bucket, window: 60, now: at(0)) == (0, nil))
            for second in [0.0, 10.0] { _ = try await store.recordHit(bucket: bucket, limit: 5, window: 60, now: at(second)) }
            for _ in 0..<3 { #expect(try await store.hits(bucket: bucket, window: 60, now: at(30)) == (2, at(0))) }
            // At +60s the hit of +0s has left the window.
            #expect(try await store.hits(bucket: bucket, window: 60, now: at(60)) == (1, at(10)))
            #expect(try await store.hits(bucket: "other " + newID(), window: 60, now: at(30)) == (0, nil))
            // Reading recorded nothing: three more hits fit under a limit of 5.
            #expect(try await store.recordHit(bucket: bucket, limit: 5, window: 60, now: at(30)).remaining == 2)
        },
        StoreContract("rate limits (concurrent): 30 hits at once with limit 5 allow exactly 5") { store async throws in
            let bucket = "burst " + newID()
            let decisions = try await concurrently(30) { _ in
                try await store.recordHit(bucket: bucket, limit: 5, window: 60, now: at(0))
            }
            let allowed = decisions.compactMap(\.remaining)
            #expect(allowed.count == 5)
            #expect(allowed.sorted() == [0, 1, 2, 3, 4])
            #expect(decisions.filter { $0 == .denied(resetAt: at(60)) }.count == 25)
            #expect(try await store.recordHit(bucket: bucket, limit: 5, window: 60, now: at(1)) == .denied(resetAt: at(60)))
        },
    ]

    // MARK: Budgets

    static let budgets: [StoreContract] = [
        StoreContract("budgets: no limit by default; set and overwrite; unknown user is false") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            #expect(try await store.budgetLimit(ofUser: user) == nil)
            #expect(try await store.setBudgetLimit(ofUser: user, to: 12.5))
            #expect(try await store.budgetLimit(ofUser: user) == 12.5)
            #expect(try await store.setBudgetLimit(ofUser: user, to: 3))
            #expect(try await store.budgetLimit(ofUser: user) == 3)
            let state = try await store.budgetState(ofUser: user, since: at(-1))
            #expect(state.limit == 3)
            #expect(state.used == 0)

            let unknown = newID()
            #expect(try await store.setBudgetLimit(ofUser: unknown, to: 10) == false)
            #expect(try await store.budgetLimit(ofUser: unknown) == nil)
        },
        StoreContract("budgets: recorded, duplicate key, exhausted, unknown user") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            #expect(try await store.recordUsage(userID: user, amount: 2, idempotencyKey: "a", limit: 3, since: at(0), at: at(1)) == .recorded)
            #expect(try await store.recordUsage(userID: user, amount: 2, idempotencyKey: "a", limit: 3, since: at(0), at: at(2)) == .duplicate)
            #expect(try await store.budgetState(ofUser: user, since: at(0)).used == 2)
            // Under the limit before it: recorded, even though it goes over.
            #expect(try await store.recordUsage(userID: user, amount: 2, idempotencyKey: "b", limit: 3, since: at(0), at: at(3)) == .recorded)
            #expect(try await store.recordUsage(userID: user, amount: 1, idempotencyKey: "c", limit: 3, since: at(0), at: at(4)) == .exhausted)
            #expect(try await store.budgetState(ofUser: user, since: at(0)).used == 4)
            // A duplicate is reported as such even when the budget is used up.
            #expect(try await store.recordUsage(userID: user, amount: 2, idempotencyKey: "b", limit: 3, since: at(0), at: at(5)) == .duplicate)
            // The exhausted record was not stored: with a higher limit its key is new.
            #expect(try await store.recordUsage(userID: user, amount: 1, idempotencyKey: "c", limit: 10, since: at(0), at: at(6)) == .recorded)
            #expect(try await store.budgetState(ofUser: user, since: at(0)).used == 5)
            #expect(
                try await store.recordUsage(userID: newID(), amount: 1, idempotencyKey: "a", limit: 3, since: at(0), at: at(1)) == .unknownUser)
        },
        StoreContract("budgets: usage before `since` is not counted; keys are per user") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            #expect(try await store.recordUsage(userID: user, amount: 5, idempotencyKey: "old", limit: 5, since: at(0), at: at(10)) == .recorded)
            #expect(try await store.recordUsage(userID: user, amount: 1, idempotencyKey: "x", limit: 5, since: at(0), at: at(11)) == .exhausted)
            // A new period starting at +10s: the record made at +10s is outside it.
            #expect(try await store.budgetState(ofUser: user, since: at(10)).used == 0)
            #expect(try await store.budgetState(ofUser: user, since: at(9)).used == 5)
            #expect(try await store.recordUsage(userID: user, amount: 1, idempotencyKey: "x", limit: 5, since: at(10), at: at(100)) == .recorded)
            #expect(try await store.budgetState(ofUser: user, since: at(10)).used == 1)

            let other = newID()
            #expect(try await store.registerUser(id: other, kind: .federated, at: at(0)))
            #expect(try await store.recordUsage(userID: other, amount: 1, idempotencyKey: "old", limit: 5, since: at(0), at: at(1)) == .recorded)
            #expect(try await store.budgetState(ofUser: other, since: at(0)).used == 1)
        },
        StoreContract("budgets (concurrent): 20 records with limit 5 record exactly 5") { store async throws in
            let user = newID()
            #expect(try await store.registerUser(id: user, kind: .federated, at: at(0)))
            let outcomes = try await concurrently(20) { index in
                try await store.recordUsage(userID: user, amount: 1, idempotencyKey: "k\(index)", limit: 5, since: at(0), at: at(1))
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 5)
            #expect(outcomes.filter { $0 == .exhausted }.count == 15)
            #expect(try await store.budgetState(ofUser: user, since: at(0)).used == 5)
        },
    ]

    // MARK: Revocation feed

    static let revocationFeed: [StoreContract] = [
        StoreContract("revocation feed: sequence grows, entries come in order after a cursor, with a limit") { store async throws in
            #expect(try await store.latestRevocationSequence() == 0)
            #expect(try await feed(store).isEmpty)
            var revoked: [String] = []
            var sequences: [Int] = []
            for second in 0..<5 {
                let (_, session) = try await registerDevice(store)
                #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(Double(second))))
                revoked.append(session.id)
                sequences.append(try await store.latestRevocationSequence())
            }
            #expect(sequences == sequences.sorted())
            #expect(Set(sequences).count == 5)
            let all = try await feed(store)
            #expect(all.map(\.value) == revoked)
            #expect(all.map(\.sequence) == sequences)
            #expect(all.allSatisfy { $0.scope == .session })

            #expect(try await store.revocations(after: sequences[1], limit: 100).map(\.value) == Array(revoked[2...]))
            #expect(try await store.revocations(after: sequences[1], limit: 2).map(\.value) == Array(revoked[2...3]))
            #expect(try await store.revocations(after: sequences[4], limit: 100).isEmpty)
        },
        StoreContract("revocation feed: PostgreSQL wakes listeners when revocations commit; SQLite has no notifications") {
            store async throws in
            guard store.database.dialect == .postgresql else {
                #expect(try await store.followRevocations({}) == false)
                return
            }
            let (wakes, wake) = AsyncStream<Void>.makeStream()
            let listener = Task { try await store.followRevocations { wake.yield() } }
            defer { listener.cancel() }
            // LISTEN starts in the background: revoke (at most 100 times, 50 ms apart) until a wake arrives.
            let woke = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await _ in wakes { return true }
                    return false
                }
                group.addTask {
                    for second in 0..<100 {
                        let (_, session) = try await registerDevice(store)
                        #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(Double(second))))
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return false
                }
                let first = try await group.next() ?? false
                group.cancelAll()
                return first
            }
            #expect(woke, "no notification arrived for committed revocations")
        },
        StoreContract("revocation feed: prune removes old entries but keeps the newest") { store async throws in
            var sessions: [String] = []
            for second in [0.0, 10, 20, 30] {
                let (_, session) = try await registerDevice(store)
                #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(second)))
                sessions.append(session.id)
            }
            let latest = try await store.latestRevocationSequence()
            _ = try await store.prune(PruneRules(now: at(0), hitsBefore: at(0), sessionsBefore: at(-1), feedBefore: at(15)))
            #expect(try await feed(store).map(\.value) == Array(sessions[2...]))
            #expect(try await store.latestRevocationSequence() == latest)
            // Pruning everything keeps the newest entry, so the sequence never goes backwards.
            _ = try await store.prune(PruneRules(now: at(0), hitsBefore: at(0), sessionsBefore: at(-1), feedBefore: at(1000)))
            let left = try await feed(store)
            #expect(left.map(\.value) == [sessions[3]])
            #expect(left.map(\.sequence) == [latest])
            #expect(try await store.latestRevocationSequence() == latest)
        },
        StoreContract("revocation feed: entries appended after a prune get sequence numbers past the previous latest") { store async throws in
            for second in [0.0, 1, 2] {
                let (_, session) = try await registerDevice(store)
                #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(second)))
            }
            let latest = try await store.latestRevocationSequence()
            _ = try await store.prune(PruneRules(now: at(0), hitsBefore: at(0), sessionsBefore: at(-1), feedBefore: at(1000)))
            #expect(try await feed(store).count == 1)

            // A reader whose cursor is at the previous latest sees what comes next.
            let (device, session) = try await registerDevice(store)
            #expect(try await store.revokeSession(id: session.id, reason: "test", at: at(2000)))
            let next = try await store.revocations(after: latest, limit: 100)
            #expect(next.map(\.value) == [session.id])
            #expect(try #require(next.first).sequence > latest)
            _ = try #require(try await store.deleteUser(id: device.userID, at: at(2001)))
            let both = try await store.revocations(after: latest, limit: 100)
            #expect(both.map(\.scope) == [.session, .user])
            #expect(both.map(\.value) == [session.id, device.userID])
            #expect(both.map(\.sequence) == both.map(\.sequence).sorted())
            #expect(try await store.latestRevocationSequence() == both.last?.sequence)
        },
    ]
}

extension RateLimitDecision {
    fileprivate var hitID: String? {
        if case .allowed(let hitID, _, _) = self { hitID } else { nil }
    }

    fileprivate var remaining: Int? {
        if case .allowed(_, let remaining, _) = self { remaining } else { nil }
    }

    fileprivate var resetAt: Date {
        switch self {
        case .allowed(_, _, let resetAt), .denied(let resetAt): resetAt
        }
    }
}
