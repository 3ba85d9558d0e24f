import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// `users/me` answers from profiles read in the last `cache.profile-ttl` seconds: this process's own writes show at
/// once, another process's within the TTL, and a TTL of 0 reads the database every time.
@Suite struct ProfileCacheTests {
    static func me(_ client: some TestClientProtocol, _ token: String) async throws -> UserProfile {
        try await client.send(.get, "/api/v1/users/me", bearer: token).decode(UserProfile.self)
    }

    @Test(arguments: Transport.allCases)
    func thisProcesssOwnWritesShowAtOnce(transport: Transport) async throws {
        try await withServer(transport, configure: { $0.budgets.serviceKey = BudgetTests.serviceKey }) { client, server in
            let device = try await client.registerDevice()
            #expect(try await Self.me(client, device.accessToken).budget?.used == 0)
            #expect(try await BudgetTests.record(client, device.userID, 2.5, key: "a").status == .ok)
            #expect(try await Self.me(client, device.accessToken).budget?.used == 2.5)

            // A refresh is the device seen again: its last_seen_at (shown to the day) moves in the very next profile
            // (within the TTL of the profile read before it).
            server.clock.advance(by: 86_400)
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let seen = try #require(try await Self.me(client, refreshed.accessToken).devices.first?.lastSeenAt)
            #expect(server.clock.now().timeIntervalSince(seen) >= 0 && server.clock.now().timeIntervalSince(seen) < 86_400)
            #expect(seen.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) == 0)
        }
    }

    @Test(arguments: [2.0, 0])
    func anotherProcesssWritesShowWithinTheTTL(ttl: TimeInterval) async throws {
        try await withServer(.router, configure: { $0.profileCacheTTL = ttl }) { client, server in
            let device = try await client.registerDevice()
            #expect(try await Self.me(client, device.accessToken).budget?.limit == 100)
            // Another process: the same database through a store of its own.
            let elsewhere = SQLLatchkeyStore(database: server.services.database)
            #expect(try await elsewhere.setBudgetLimit(ofUser: device.userID, to: 7))
            let soon = try await Self.me(client, device.accessToken).budget?.limit
            if server.services.database.dialect == .postgresql {
                // The other process's commit notifies this one (its change feed), which drops the profile before the TTL.
                // (Written again until it shows: this process may not be listening yet when the test begins.)
                try await MultiProcessTests.eventually(within: .seconds(10), "the notification dropped the cached profile") {
                    if try await Self.me(client, device.accessToken).budget?.limit == 7 { return true }
                    _ = try await elsewhere.setBudgetLimit(ofUser: device.userID, to: 7)
                    return false
                }
            } else {
                #expect(soon == (ttl > 0 ? 100 : 7))
            }
            server.clock.advance(by: ttl)
            #expect(try await Self.me(client, device.accessToken).budget?.limit == 7)
        }
    }

    @Test
    func aSettingOutsideItsRangeIsRefusedAtStart() async throws {
        for configure in [
            { (c: inout LatchkeyConfiguration) in c.profileCacheTTL = -1 }, { $0.profileCacheTTL = 61 }, { $0.profileCacheCapacity = -1 },
        ] {
            await #expect(throws: LatchkeyServices.ConfigurationError.self) { _ = try await TestServer.make(configure: configure) }
        }
    }

    @Test
    func aReadThatAnInvalidationOvertookIsNotKept() {
        let clock = ManualClock()
        let cache = ProfileCache(ttl: 2, capacity: 3, clock: clock)
        let profile = { (id: String) in
            UserProfileRecord(
                user: UserRecord(id: id, kind: .device, createdAt: clock.now()), devices: [], identities: [], budgetLimit: nil, usedBudget: 0)
        }
        let ticket = cache.ticket()
        cache.invalidate(userID: "a")  // a write committed while the read was on its way
        cache.insert(profile("a"), ticket: ticket)
        #expect(cache.lookup(userID: "a") == nil)
        cache.insert(profile("a"), ticket: cache.ticket())
        #expect(cache.lookup(userID: "a") == profile("a"))
        clock.advance(by: 2)
        #expect(cache.lookup(userID: "a") == nil)  // stale after the TTL
        for id in ["b", "c", "d", "e"] { cache.insert(profile(id), ticket: cache.ticket()) }
        #expect(cache.count <= 3)  // bounded
    }
}
