import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// How `session.liveEvents()` connects again, and when it stops trying. Waits are on the fixture's manual clock, which
/// moves instead of sleeping.
@Suite(.timeLimit(.minutes(1)))
struct LiveEventsReconnectTests {
    // MARK: the backoff itself

    @Test func eachWaitLiesBetweenHalfAndAllOfTheExponentialCeiling() {
        for attempt in 1...10 {
            let ceiling = min(60, pow(2, Double(attempt - 1)))
            #expect(ReconnectPolicy(random: { 0 }).delay(forAttempt: attempt) == ceiling / 2)
            #expect(ReconnectPolicy(random: { 1 }).delay(forAttempt: attempt) == ceiling)
        }
    }

    @Test func theWaitNeverPassesTheMaximumHoweverManyFailures() {
        let policy = ReconnectPolicy(initialDelay: 2, maximumDelay: 30, random: { 1 })
        #expect(policy.delay(forAttempt: 5) == 30)
        #expect(policy.delay(forAttempt: 10_000) == 30)
    }

    @Test func aRandomSourceOutsideZeroToOneIsClamped() {
        #expect(ReconnectPolicy(random: { 7 }).delay(forAttempt: 3) == 4)
        #expect(ReconnectPolicy(random: { -1 }).delay(forAttempt: 3) == 2)
    }

    // MARK: reconnecting

    @Test func failuresInARowWaitLongerEachTimeOnTheSessionsClock() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.fail, .fail, .refuse(503)]))
        try fixture.storeSession()
        let start = fixture.clock.now()
        var events = fixture.session { $0.liveEventsReconnect = ReconnectPolicy(random: { 0.5 }) }.liveEvents().makeAsyncIterator()
        #expect(await events.next() == .reconnecting(after: 0.75))
        #expect(await events.next() == .reconnecting(after: 1.5))
        #expect(await events.next() == .reconnecting(after: 3))
        try await fixture.webSocket.opened.next().push("connected")
        #expect(await events.next() == .connected)
        #expect(fixture.clock.now().timeIntervalSince(start) == 5.25)
        #expect(fixture.webSocket.requests.count == 4)
    }

    @Test func aConnectionThatReachedConnectedStartsTheCountAgain() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.fail, .fail]))
        try fixture.storeSession()
        var events = fixture.session { $0.liveEventsReconnect = ReconnectPolicy(random: { 1 }) }.liveEvents().makeAsyncIterator()
        #expect(await events.next() == .reconnecting(after: 1))
        #expect(await events.next() == .reconnecting(after: 2))
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)
        socket.close(code: 1006)
        #expect(await events.next() == .reconnecting(after: 1))
        try await fixture.webSocket.opened.next().push("connected")
        #expect(await events.next() == .connected)
    }

    @Test func a429WaitsAtLeastItsRetryAfter() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.refuse(429, headers: ["Retry-After": "30"])]))
        try fixture.storeSession()
        var events = fixture.session { $0.liveEventsReconnect = ReconnectPolicy(random: { 1 }) }.liveEvents().makeAsyncIterator()
        #expect(await events.next() == .reconnecting(after: 30))
        try await fixture.webSocket.opened.next().push("connected")
        #expect(await events.next() == .connected)
    }

    @Test func a401AtConnectRefreshesOnceAndConnectsAgainAtOnceWithTheNewToken() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.refuse(401)])) { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : TransportResponse(status: 404)
        }
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)  // no reconnecting in between
        #expect(fixture.webSocket.requests.map { $0.header("Authorization") } == ["Bearer access-1", "Bearer access-2"])
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
    }

    @Test func a401WhoseRefreshIsRejectedEndsTheSessionAndTheStream() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.refuse(401)])) { _ in .error(401, .invalidGrant) }
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        #expect(await events.next() == .ended(.signedOut))
        #expect(await session.state == .signedOut(reason: .sessionExpired))
        #expect(fixture.webSocket.requests.count == 1)
    }

    @Test func tokenExpiredReconnectsAtOnceWithARefreshedToken() async throws {
        let fixture = Fixture { request in request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : TransportResponse(status: 404) }
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let first = try await fixture.webSocket.opened.next()
        first.push("connected")
        #expect(await events.next() == .connected)
        first.push("token.expired")
        first.close(code: SessionEventCloseCode.expired)
        let second = try await fixture.webSocket.opened.next()
        second.push("connected")
        #expect(await events.next() == .connected)
        #expect(second.request.header("Authorization") == "Bearer access-2")
    }

    @Test func tokenExpiredIsRecognisedByItsFrameWhenThePlatformLosesTheCloseCode() async throws {
        let fixture = Fixture { request in request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : TransportResponse(status: 404) }
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let first = try await fixture.webSocket.opened.next()
        first.push("token.expired")
        first.close(code: 1003)  // FoundationNetworking on Linux reports 4002 so
        try await fixture.webSocket.opened.next().push("connected")
        #expect(await events.next() == .connected)
        #expect(fixture.webSocket.requests.last?.header("Authorization") == "Bearer access-2")
    }

    // MARK: endings

    @Test func close4008EndsTheStreamWithoutReconnecting() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)
        socket.close(code: SessionEventCloseCode.tooManySockets)
        #expect(await events.next() == .ended(.tooManyConnections))
        #expect(await events.next() == nil)
        #expect(fixture.webSocket.requests.count == 1)
        #expect(try fixture.store.load()?.session?.accessToken == "access-1")  // still signed in
    }

    /// FoundationNetworking reports 4008 as 1003: the `too_many_sockets` frame the server sends first says it all the same.
    @Test func theTooManySocketsFrameEndsTheStreamWhateverCodeTheCloseArrivesWith() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)
        socket.push("error", ["error": "too_many_sockets", "message": "this, the oldest, is closed (4008)"])
        socket.close(code: 1003)
        #expect(await events.next() == .ended(.tooManyConnections))
        #expect(await events.next() == nil)
        #expect(fixture.webSocket.requests.count == 1)
    }

    @Test func aPlatformWithoutWebSocketsEndsTheStreamAtOnce() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.unsupported]))
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let event = await events.next()
        guard case .ended(.unsupported(let reason)) = event else {
            Issue.record("expected .ended(.unsupported), got \(String(describing: event))")
            return
        }
        #expect(reason.contains("no WebSockets in this test"))
        #expect(await events.next() == nil)
        #expect(fixture.webSocket.requests.count == 1)
    }

    @Test func aServerWithoutTheEventStreamEndsItWithTheStatus() async throws {
        let fixture = Fixture(webSocket: FakeWebSocketTransport([.refuse(404)]))
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        #expect(await events.next() == .ended(.refused(status: 404)))
        #expect(fixture.webSocket.requests.count == 1)
    }

    @Test func anotherSignInHereReconnectsWithTheNewSession() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/register-device" ? .json(201, Samples.pair(5)) : TransportResponse(status: 204)
        }
        try fixture.storeSession()
        let session = fixture.session { $0.usesDeviceKey = false }
        var events = session.liveEvents().makeAsyncIterator()
        let first = try await fixture.webSocket.opened.next()
        first.push("connected")
        #expect(await events.next() == .connected)
        _ = try await session.registerDevice()
        try await first.closedByClient()
        let second = try await fixture.webSocket.opened.next()
        second.push("connected")
        #expect(await events.next() == .connected)
        #expect(second.request.header("Authorization") == "Bearer access-5")
    }
}
