import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite struct StateAndRedactionTests {
    @Test func authStatesStartWithTheCurrentStateAndFollowChanges() async throws {
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/logout" ? .json(200, LogoutResponse(revokedSessions: 1)) : .json(201, Samples.pair(1, secret: "s"))
        }
        let session = fixture.session()
        var states = await session.authStates().makeAsyncIterator()
        #expect(await states.next() == .restoring)
        #expect(await session.bootstrap() == .signedOut)
        #expect(await states.next() == .signedOut)
        try await session.registerDevice()
        #expect(await states.next()?.isSignedIn == true)
        try await session.signOut()
        #expect(await states.next() == .signedOut)
    }

    @Test @MainActor func theObservableModelFollowsTheSession() async throws {
        let fixture = Fixture { _ in .json(201, Samples.pair(1, secret: "s")) }
        let session = fixture.session()
        let model = AuthModel(session: session)
        let observing = Task { await model.observe() }
        defer { observing.cancel() }
        try await session.registerDevice()
        for _ in 0..<1000 where !model.state.isSignedIn { await Task.yield() }
        #expect(model.state.isSignedIn)
    }

    @Test func noTokenOrSecretAppearsInDescriptionsOrErrors() async throws {
        let secrets = ["access-1", "refresh-1", "secret-1", "access-2", "refresh-2"]
        let fixture = Fixture { request in
            request.url.path == "/api/v1/auth/refresh" ? .json(200, Samples.pair(2)) : Samples.me(accepting: [], request)
        }
        try fixture.storeSession()
        let session = fixture.session()
        var texts: [String] = []
        do { _ = try await session.currentUser() } catch {
            texts += [String(describing: error), String(reflecting: error), error.localizedDescription]
        }
        let credentials = try #require(try fixture.store.load())
        let requests = fixture.transport.requests
        let state = await session.state
        for value in [credentials as Any, credentials.session as Any, requests as Any, state as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts += [String(describing: value), String(reflecting: value), dumped]
        }
        let webSocket = requests.first.map { TransportRequest(method: "GET", url: URL(string: "wss://x/ws?token=access-2")!, headers: $0.headers) }
        texts.append(String(describing: webSocket))
        for text in texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) leaked in: \(text)") }
        }
    }
}
