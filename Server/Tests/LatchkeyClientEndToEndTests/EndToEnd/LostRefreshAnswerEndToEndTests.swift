import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 1: a refresh whose answer is lost after the server rotated does not log the user out.
@Suite struct LostRefreshAnswerEndToEndTests {
    @Test func aLostRefreshAnswerIsRecoveredAndOnlyALaterReuseOfTheOriginalRevokesTheSession() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let losing = AnswerLosingTransport()
            let session = app.launch(transport: losing)
            try await session.registerDevice()
            let original = try #require(try app.store.load())

            // The server rotates; the answer never reaches the app.
            losing.loseNextAnswer(to: "/api/v1/auth/refresh")
            await #expect(throws: LatchkeyError.offline(.timedOut)) { try await session.refresh() }
            let lost = try JSONDecoder().decode(TokenPairResponse.self, from: try #require(losing.lostAnswers.first).body)
            #expect(try app.store.load()?.session?.refreshToken == original.session?.refreshToken)
            #expect(await session.state.isSignedIn)

            // A minute later (well past the 10 s grace window) the app refreshes with the token it still holds.
            app.advance(by: 60)
            try await session.refresh()
            #expect(try app.store.load()?.session?.refreshToken == lost.refreshToken)
            #expect(await session.state.isSignedIn)
            #expect(try await session.currentUser().userID == original.session?.userID)

            // The app goes on with the successor; a copy still holding the original presents it after that: a reuse.
            try await session.refresh()
            app.advance(by: 60)
            let stale = LatchkeySession(
                configuration: .init(serverURL: server.url), secureStore: InMemorySecureStore(original), defaults: app.defaults,
                transport: URLSessionTransport(), clock: app.clock)
            await #expect(throws: LatchkeyError.sessionExpired) { try await stale.refresh() }
            await #expect(throws: LatchkeyError.sessionExpired) { try await session.currentUser() }
            #expect(await session.state == .signedOut(reason: .sessionExpired))
        }
    }
}
