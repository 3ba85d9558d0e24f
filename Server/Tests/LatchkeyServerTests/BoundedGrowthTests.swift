import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Testing

// `@testable`: the verification cache's size, to prove nothing is left behind.
@testable import LatchkeyServer

/// The database and the process stay bounded however long the server runs.
@Suite struct BoundedGrowthTests {
    @Test func thePrunerRemovesExpiredHitsTokensAndRevokedSessions() async throws {
        try await withServer(.router, configure: { $0.limits.registerDevice.limit = 100 }) { client, server in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken).status == .ok)
            let early = try await server.services.pruner.prune()
            #expect(early.total == 0, "\(early)")  // nothing is old yet
            // The webhook outbox's events (a registration, a session, a logout) are old only once fanned out, which the
            // deliverer's loop does on the server's clock: fan them out now, or its pass woken by the clock could come
            // between this test's two passes and the second would find them.
            await server.services.webhooks.deliverDue()
            server.clock.advance(by: 31 * 86_400)
            let counts = try await server.services.pruner.prune()
            #expect(counts.rateLimitHits == 1)
            #expect(counts.sessions == 1)
            #expect(counts.refreshTokens == 1)
            #expect(counts.webhookEvents == 3)
            let after = try await server.services.pruner.prune()
            #expect(after.total == 0, "\(after)")
        }
    }

    /// The pruner's loop waits `prune.interval` on the server's clock, not in real time: moving the clock past it starts a
    /// pass, with no call from the test.
    @Test func theBackgroundPrunerRunsWhenTheServersClockPassesItsInterval() async throws {
        try await withServer(.router, configure: { $0.pruneInterval = 3_600 }) { client, server in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken).status == .ok)
            #expect(try await server.services.store.session(id: device.sessionID) != nil)
            server.clock.advance(by: 31 * 86_400)  // past the revoked session's day, and the pruner's hour
            try await MultiProcessTests.eventually(within: .seconds(10), "the background pass removed the revoked session") {
                try await server.services.store.session(id: device.sessionID) == nil
            }
        }
    }

    /// A hit goes once past its own policy's window (not the longest of all, a day); a live session's spent refresh
    /// token once past the grace window with a successor used since, while the lost answer can still be given again.
    @Test func hitsGoPastTheirOwnWindowAndSpentRefreshTokensPastTheGraceAndLostAnswerWindows() async throws {
        try await withServer(.live, configure: { $0.limits.registerDevice.limit = 100 }) { client, server in
            let device = try await client.registerDevice()
            let second = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 1)
            let third = try await client.refresh(second.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 3_600)  // past register-device's hour and the grace window; the meters' day is not over
            let counts = try await server.services.pruner.prune()
            #expect(counts.rateLimitHits == 1)
            #expect(counts.refreshTokens == 1)  // the first; the second stays while its successor is unused
            let lostAnswer = try await client.refresh(second.refreshToken)
            #expect(lostAnswer.status == .ok)
            #expect(try lostAnswer.decode(TokenPairResponse.self).refreshToken == third.refreshToken)
        }
    }

    @Test func perClientLimitsCountAnIPv6ClientByItsSlash64() async throws {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.limits.registerDevice.limit = 2
                configuration.limits.trustedProxies = ["127.0.0.1"]
            }
        ) { client, _ async throws in
            func register(from address: String) async throws -> HTTPResponse.Status {
                try await client.send(
                    .post, "/api/v1/auth/register-device", json: #"{"device_id": "\#(UUID().uuidString)"}"#,
                    headers: [HTTPField.Name("X-Forwarded-For")!: address]
                ).status
            }
            #expect(try await register(from: "2001:db8:1:2::1") == .created)
            #expect(try await register(from: "2001:db8:1:2:ffff:0:0:7") == .created)
            // Another address of the same /64: the same client.
            #expect(try await register(from: "2001:db8:1:2::abcd") == .tooManyRequests)
            #expect(try await register(from: "2001:db8:1:3::1") == .created)
        }
    }

    @Test func networkKeys() {
        #expect(ClientNetwork.key(of: "192.0.2.7") == "192.0.2.7")
        #expect(ClientNetwork.key(of: "::ffff:192.0.2.7") == "192.0.2.7")
        #expect(ClientNetwork.key(of: "2001:db8::1") == "2001:db8:0:0::/64")
        #expect(ClientNetwork.key(of: "2001:DB8:0:0:1:2:3:4") == "2001:db8:0:0::/64")
        #expect(ClientNetwork.key(of: "unknown") == "unknown")
    }

    @Test func theVerificationCacheKeepsNothingOfTokensThatWereDropped() async throws {
        try await withServer(.router) { client, server in
            let cache = server.services.verifier.cache
            let baseline = cache.size
            for _ in 0..<50 {
                let device = try await client.registerDevice()
                let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
                try await expectAccepted(refreshed.accessToken, by: client)
                try await expectAccepted(device.accessToken, by: client)
                let logout = try await client.send(.post, "/api/v1/auth/logout", bearer: refreshed.accessToken, json: #"{"scope": "global"}"#)
                #expect(logout.status == .ok)
            }
            #expect(cache.size.entries == baseline.entries)
            #expect(cache.size.indexed == baseline.indexed)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aWriteQueuedBehindABusyWriterGives503() async throws {
        let server = try await TestServer.make(backend: .sqlite) { $0.databaseTimeout = 0.3 }
        try await server.test(.router) { client in
            let (held, release) = AsyncStream<Void>.makeStream()
            let (entered, enter) = AsyncStream<Void>.makeStream()
            // A transaction that holds SQLite's single writer until the test lets it go.
            let holder = Task {
                try await server.services.database.transaction { _ in
                    enter.yield()
                    for await _ in held { break }
                }
            }
            for await _ in entered { break }
            let response = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            #expect(response.status == .serviceUnavailable)
            #expect(response.envelope?.error.code == .serviceUnavailable)
            release.yield()
            try await holder.value
            #expect(
                try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString)).status
                    == .created)
        }
    }
}
