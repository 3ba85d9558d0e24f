import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// `session.liveEvents()` against a scripted WebSocket: what the app sees, and what the session does with it.
@Suite(.timeLimit(.minutes(1)))
struct LiveEventsTests {
    @Test func theStreamConnectsToTheEventsEndpointWithTheBearerInTheHeaderNotTheURL() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected", ["user_id": "user", "expires_at": "2027-01-15T08:00:00Z"])
        #expect(await events.next() == .connected)
        #expect(socket.request.url.absoluteString == "wss://auth.example.test/api/v1/events")
        #expect(socket.request.header("Authorization") == "Bearer access-1")
    }

    @Test func framesArriveAsTypedEventsInOrder() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        socket.push("budget.changed", ["limit": 10, "used": 2.5, "remaining": 7.5])
        socket.push("identity.linked", ["provider": "apple"])
        socket.push("error", ["error": "bad_frame", "message": "That was not JSON."])
        socket.push("user.deleted")
        var received: [LiveEvent?] = []
        for _ in 0..<5 { received.append(await events.next()) }
        #expect(
            received == [
                .connected, .budgetChanged(limit: 10, used: 2.5, remaining: 7.5), .identityLinked(provider: "apple"),
                .serverError(code: "bad_frame", message: "That was not JSON."), .userDeleted,
            ])
    }

    @Test func framesThatAreNotJSONOrOfAnUnknownTypeAreSkipped() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push(text: "not json")
        socket.push(text: #"{"no_type":1}"#)
        socket.push("something.new.from.a.later.server", ["x": 1])
        socket.push("identity.linked")  // a known type without its field
        socket.push("identity.linked", ["provider": "clerk"])
        #expect(await events.next() == .identityLinked(provider: "clerk"))
        #expect(!socket.isClosedByClient)
    }

    @Test func sessionRevokedSignsOutHereAndEndsTheStream() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session()
        let sessionEvents = await session.events()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        socket.push("session.revoked", ["reason": "logout_global"])
        socket.close(code: SessionEventCloseCode.revoked)
        #expect(await events.next() == .connected)
        #expect(await events.next() == .sessionRevoked(.logoutGlobal))
        #expect(await events.next() == nil)
        #expect(await session.state == .signedOut(reason: .revoked))
        #expect(await sessionEvents.first { $0 == .signedOut(.revoked) } != nil)
        #expect(try fixture.store.load()?.session == nil)
    }

    @Test func afterARevocationNoRequestCarriesTheDeadTokens() async throws {
        let fixture = Fixture { _ in .json(200, Samples.profile()) }
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("session.revoked", ["reason": "reuse_detected"])
        #expect(await events.next() == .sessionRevoked(.reuseDetected))
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.currentUser() }
        await #expect(throws: LatchkeyError.notSignedIn) { try await session.refresh() }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aRevocationWithAReasonThisSDKDoesNotKnowStillSignsOutAndKeepsTheReason() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        try await fixture.webSocket.opened.next().push("session.revoked", ["reason": "moon_phase"])
        #expect(await events.next() == .sessionRevoked(SessionRevocationReason(rawValue: "moon_phase")))
        #expect(try fixture.store.load()?.session == nil)
    }

    @Test func afterARefreshTheConnectionSendsReauthenticateWithTheNewToken() async throws {
        let fixture = Fixture { request in request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : TransportResponse(status: 404) }
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)
        try await session.refresh()
        let frame = try await socket.nextSentFrame()
        #expect(frame["type"] as? String == "reauthenticate")
        #expect(frame["token"] as? String == "access-2")
        #expect(socket.sent.pending.isEmpty)
    }

    @Test func tokenExpiringRefreshesTheSessionThenReauthenticates() async throws {
        let fixture = Fixture { request in request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : TransportResponse(status: 404) }
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("token.expiring", ["expires_at": "2027-01-15T08:00:00Z"])
        #expect(await events.next() == .tokenExpiring(expiresAt: try Date("2027-01-15T08:00:00Z", strategy: .iso8601)))
        #expect(try await socket.nextSentFrame()["token"] as? String == "access-2")
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").count == 1)
        socket.push("reauthenticated", ["expires_at": "2027-01-15T08:15:00Z"])
        #expect(await events.next() == .reauthenticated(expiresAt: try Date("2027-01-15T08:15:00Z", strategy: .iso8601)))
    }

    @Test func tokenExpiringOnASessionWithoutRefreshTokenLeavesItAsItIs() async throws {
        let fixture = Fixture()
        try fixture.storeSession(refresh: nil, kind: .guest)
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("token.expiring", ["expires_at": "2027-01-15T08:00:00Z"])
        socket.push("identity.linked", ["provider": "apple"])
        #expect(await events.next() == .tokenExpiring(expiresAt: try Date("2027-01-15T08:00:00Z", strategy: .iso8601)))
        #expect(await events.next() == .identityLinked(provider: "apple"))
        #expect(fixture.transport.requests.isEmpty)
        #expect(try fixture.store.load()?.session?.accessToken == "access-1")
    }

    @Test func signingOutHereClosesTheConnectionAndEndsTheStream() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 204) }
        try fixture.storeSession()
        let session = fixture.session()
        var events = session.liveEvents().makeAsyncIterator()
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        #expect(await events.next() == .connected)
        try await session.signOut()
        #expect(await events.next() == .ended(.signedOut))
        #expect(await events.next() == nil)
        #expect(socket.isClosedByClient)
        #expect(fixture.webSocket.requests.count == 1)
    }

    @Test func withoutASessionTheStreamEndsAtOnce() async throws {
        let fixture = Fixture()
        var events = fixture.session().liveEvents().makeAsyncIterator()
        #expect(await events.next() == .ended(.signedOut))
        #expect(fixture.webSocket.requests.isEmpty)
    }

    @Test func stoppingTheIterationClosesTheSocket() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session()
        let consumer = Task {
            for await event in session.liveEvents() where event == .connected { break }
        }
        let socket = try await fixture.webSocket.opened.next()
        socket.push("connected")
        await consumer.value
        try await socket.closedByClient()
        #expect(fixture.webSocket.requests.count == 1)
    }
}
