import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 30, item 14: sign-ins run one at a time, and a deletion ends only the session it deleted.
@Suite struct SignInSerializationTests {
    /// Counts the sign-in requests in flight at once; the first one waits for `release`.
    final class Overlap: @unchecked Sendable {
        private let lock = NSLock()
        private var inFlight = 0
        private(set) var most = 0
        let firstSent = Gate()
        let release = Gate()

        func enter() async {
            let first = self.lock.withLock {
                self.inFlight += 1
                self.most = max(self.most, self.inFlight)
                return self.most == 1 && self.inFlight == 1
            }
            if first { self.firstSent.open() }
            await self.release.wait()
        }

        func leave() { self.lock.withLock { self.inFlight -= 1 } }
        var mostAtOnce: Int { self.lock.withLock { self.most } }
    }

    /// Lets the tasks started so far reach the session actor and wait there.
    static func letTheOtherCallsArrive() async {
        for _ in 0..<1000 { await Task.yield() }
    }

    @Test func aDoubleTappedPlayRegistersTheDeviceOnceAndBothCallsGetThatSession() async throws {
        let overlap = Overlap()
        let registered = Counter()
        let fixture = Fixture { request in
            await overlap.enter()
            defer { overlap.leave() }
            return .json(200, Samples.pair(registered.increment()))
        }
        let session = fixture.session()
        let first = Task { try await session.registerDevice() }
        await overlap.firstSent.wait()
        let second = Task { try await session.registerDevice() }
        await Self.letTheOtherCallsArrive()
        overlap.release.open()
        let sessions = try await [first.value, second.value]
        #expect(fixture.transport.requests(to: "/api/v1/auth/register-device").count == 1)
        #expect(sessions[0] == sessions[1])
        #expect(try fixture.store.load()?.session?.accessToken == "access-1")
    }

    @Test func aSecondSignInOfAnotherKindWaitsForTheFirstAndReplacesItsSession() async throws {
        let overlap = Overlap()
        let fixture = Fixture { request in
            await overlap.enter()
            defer { overlap.leave() }
            return request.url.path == "/api/v1/auth/login" ? .json(200, Samples.pair(2, userID: "ann")) : .json(200, Samples.pair(1))
        }
        let session = fixture.session()
        let play = Task { try await session.registerDevice() }
        await overlap.firstSent.wait()
        let login = Task { try await session.signIn(email: "ann@example.com", password: "correct horse battery") }
        await Self.letTheOtherCallsArrive()
        overlap.release.open()
        _ = try await play.value
        #expect(try await login.value.userID == "ann")
        #expect(overlap.mostAtOnce == 1)
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/auth/register-device", "/api/v1/auth/login"])
        #expect(await session.state == .signedIn(AuthSession(userID: "ann", kind: .session, expiresAt: fixture.clock.now().addingTimeInterval(900))))
    }

    @Test func aSignInMadeAfterTheFirstFinishedRunsAgain() async throws {
        let registered = Counter()
        let fixture = Fixture { _ in .json(200, Samples.pair(registered.increment())) }
        let session = fixture.session()
        try await session.registerDevice()
        try await session.registerDevice()
        #expect(registered.count == 2)
        #expect(try fixture.store.load()?.session?.accessToken == "access-2")
    }

    @Test func aDeletionAnsweredAfterAnotherSignInLeavesTheNewSessionInUse() async throws {
        let deleteSent = Gate()
        let answer = Gate()
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/users/me":
                deleteSent.open()
                await answer.wait()
                return .json(200, AccountDeletionResponse(userID: "user", revokedSessions: 1, appleTokensRevoked: 0))
            default: return .json(200, Samples.pair(5, userID: "ann"))
            }
        }
        try fixture.storeSession()
        let session = fixture.session()
        let deletion = Task { try await session.deleteAccount() }
        await deleteSent.wait()
        let ann = try await session.signIn(email: "ann@example.com", password: "correct horse battery")
        answer.open()
        #expect(try await deletion.value.userID == "user")
        #expect(await session.state == .signedIn(ann))
        #expect(try fixture.store.load()?.session?.accessToken == "access-5")
    }
}
