import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// `session.storageCredentials()`: kept in memory until 5 minutes before expiry, one fetch however many callers, gone
/// with the session.
@Suite struct StorageCredentialsTests {
    static let path = "/api/v1/storage/credentials"

    /// A session signed in for a day, over a stub that answers credentials 1, 2, … issued when asked for (by a server clock
    /// `serverAhead` seconds ahead of the app's) and valid `lifetime` seconds; other paths answer as `other` does.
    func signedIn(
        lifetime: Int = 3600, serverAhead: TimeInterval = 0, configure: (inout LatchkeySession.Configuration) -> Void = { _ in },
        other: @escaping StubTransport.Handler = { _ in TransportResponse(status: 404) }
    ) throws -> (Fixture, LatchkeySession) {
        let clock = ManualLatchkeyClock()
        let issued = Counter()
        let fixture = Fixture(clock: clock) { request in
            guard request.url.path == Self.path else { return try await other(request) }
            return .json(
                200, Samples.storageCredentials(issued.increment(), issuedAt: clock.now().addingTimeInterval(serverAhead), lifetime: lifetime))
        }
        try fixture.storeSession(lifetime: 86_400)
        return (fixture, fixture.session(configure))
    }

    @Test func theCredentialsAreAskedForOnceWithTheBearerAndThenKept() async throws {
        let (fixture, session) = try self.signedIn()
        let first = try await session.storageCredentials()
        let second = try await session.storageCredentials()
        #expect(first.accessKeyID == "ASIAKEY1")
        #expect(second == first)
        #expect(fixture.transport.requests.count == 1)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.path == Self.path)
        #expect(sent.bearer == "access-1")
        #expect(sent.header("X-Device-ID") == nil)
    }

    @Test(arguments: zip([301.0, 300, 299], [1, 2, 2]))
    func keptCredentialsAreHandedOutUntilFiveMinutesBeforeTheyExpire(secondsBeforeExpiry: TimeInterval, fetches: Int) async throws {
        let (fixture, session) = try self.signedIn()
        let first = try await session.storageCredentials()
        fixture.clock.advance(by: first.expiration.timeIntervalSince(fixture.clock.now()) - secondsBeforeExpiry)
        let later = try await session.storageCredentials()
        #expect(fixture.transport.requests(to: Self.path).count == fetches)
        #expect(later.accessKeyID == "ASIAKEY\(fetches)")
    }

    @Test func theMarginBeforeExpiryIsTheConfiguredClockSkew() async throws {
        let (fixture, session) = try self.signedIn(configure: { $0.clockSkew = 60 })
        _ = try await session.storageCredentials()
        fixture.clock.advance(by: 3600 - 61)
        _ = try await session.storageCredentials()
        #expect(fixture.transport.requests(to: Self.path).count == 1)
        fixture.clock.advance(by: 2)
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
    }

    /// The server's clock runs 30 minutes ahead: `expiration` reads 90 minutes away here, `expires_in` says 60.
    @Test func withTheDeviceClockBehindTheServersTheLifetimeCountsFromWhenTheyWereAskedFor() async throws {
        let (fixture, session) = try self.signedIn(serverAhead: 1800)
        _ = try await session.storageCredentials()
        fixture.clock.advance(by: 3600 - 301)
        _ = try await session.storageCredentials()
        #expect(fixture.transport.requests(to: Self.path).count == 1)
        fixture.clock.advance(by: 2)
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
    }

    @Test func fiftyConcurrentCallersShareOneRequestAndItsAnswer() async throws {
        let clock = ManualLatchkeyClock()
        let issued = Counter()
        let answer = Gate()
        let fixture = Fixture(clock: clock) { _ in
            await answer.wait()
            return .json(200, Samples.storageCredentials(issued.increment(), issuedAt: clock.now()))
        }
        try fixture.storeSession(lifetime: 86_400)
        let session = fixture.session()
        let asked = Counter()
        let results = try await withThrowingTaskGroup(of: StorageCredentials.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    asked.increment()
                    return try await session.storageCredentials()
                }
            }
            // The answer waits until every caller has asked, so none of them can be served from the cache instead.
            while asked.count < 50 { await Task.yield() }
            for _ in 0..<1000 { await Task.yield() }
            answer.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fixture.transport.requests.count == 1)
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.accessKeyID == "ASIAKEY1" })
    }

    @Test func aFailedFetchIsNotKept() async throws {
        let clock = ManualLatchkeyClock()
        let calls = Counter()
        let fixture = Fixture(clock: clock) { _ in
            calls.increment() == 1 ? .error(503, .serviceUnavailable) : .json(200, Samples.storageCredentials(2, issuedAt: clock.now()))
        }
        try fixture.storeSession(lifetime: 86_400)
        let session = fixture.session()
        await #expect(throws: LatchkeyError.failure(503, .serviceUnavailable, "no")) { try await session.storageCredentials() }
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
        #expect(fixture.transport.requests(to: Self.path).count == 2)
    }

    @Test func signedOutNothingIsSent() async throws {
        let fixture = Fixture()
        await #expect(throws: LatchkeyError.notSignedIn) { try await fixture.session().storageCredentials() }
        let withProvider = fixture.session { $0.tokenProvider = { _ in nil } }
        await #expect(throws: LatchkeyError.notSignedIn) { try await withProvider.storageCredentials() }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func withATokenProviderTheyAreKeptForTheUserItsTokenNames() async throws {
        let token = Shared<String?>(Samples.providerToken(subject: "user_alice", 1))
        let (fixture, session) = try self.signedIn(configure: { configuration in configuration.tokenProvider = { _ in token.value } })
        _ = try await session.storageCredentials()
        token.value = Samples.providerToken(subject: "user_alice", 2)  // the provider's next token, same user
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY1")
        token.value = Samples.providerToken(subject: "user_bob")
        #expect(try await session.storageCredentials().accessKeyID == "ASIAKEY2")
        #expect(fixture.transport.requests(to: Self.path).map(\.bearer) == [Samples.providerToken(subject: "user_alice", 1), token.value])
        token.value = nil
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.storageCredentials() }
        #expect(fixture.transport.requests(to: Self.path).count == 2)
    }

    @Test func theirDescriptionAndDumpShowWhereTheyReachAndNoSecret() async throws {
        let (_, session) = try self.signedIn()
        let credentials = try await session.storageCredentials()
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), String(reflecting: credentials), "\(credentials)", dumped] {
            #expect(text.contains("users/user/") && text.contains("photos"), "\(text)")
            for secret in ["ASIAKEY1", "secret-access-key-1", "session-token-1"] { #expect(!text.contains(secret), "\(secret) printed in: \(text)") }
        }
    }
}
