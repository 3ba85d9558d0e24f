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
        #expect(await session.bootstrap() == .signedOut())
        #expect(await states.next() == .signedOut())
        try await session.registerDevice()
        #expect(await states.next()?.isSignedIn == true)
        try await session.signOut()
        #expect(await states.next() == .signedOut(reason: .requested))
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

    /// Sign in with Apple, token exchange and account deletion: no identity token, nonce, authorization code, external
    /// token, bearer or device secret in any error, request description, state or `dump`, even when the server's error
    /// message echoes what it was sent.
    @Test func noFederatedTokenNonceOrCodeAppearsInDescriptionsOrErrors() async throws {
        let nonce = AppleNonce.random()
        let secrets = [
            "apple-identity-token", nonce.raw, nonce.sha256, "apple-authorization-code", "clerk-session-token", "access-1", "refresh-1", "secret-1",
            "access-2", "refresh-2",
        ]
        let statuses = [401, 409, 502, 400, 200]
        let calls = Counter()
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/users/me" {
                return .json(200, AccountDeletionResponse(userID: "user", revokedSessions: 1, appleTokensRevoked: 1))
            }
            let echoed = String(decoding: request.body ?? Data(), as: UTF8.self) + " " + (request.header("Authorization") ?? "")
            let call = calls.increment()
            let status = call <= statuses.count ? statuses[call - 1] : 401
            switch status {
            case 200: return .json(200, Samples.pair(2))
            case 409: return .error(409, .identityAlreadyLinked, "Already linked: \(echoed)")
            case 502: return .error(502, .upstreamError, "Apple said no to \(echoed)")
            case 400: return .error(400, .invalidRequest, "Bad body \(echoed)")
            default: return .error(401, .invalidToken, "Refused \(echoed)")
            }
        }
        try fixture.storeDeviceSession()  // this device's user: the Apple requests carry its bearer
        let session = fixture.session()
        var errors: [any Error] = []
        for _ in 0..<4 {
            do {
                try await session.signInWithApple(
                    identityToken: Data("apple-identity-token".utf8), rawNonce: nonce.raw, authorizationCode: Data("apple-authorization-code".utf8))
            } catch { errors.append(error) }
        }
        try await session.signInWithApple(identityToken: "apple-identity-token", rawNonce: nonce.raw, authorizationCode: "apple-authorization-code")
        do { try await session.exchangeExternalToken("clerk-session-token") } catch { errors.append(error) }
        try await session.deleteAccount()
        #expect(errors.count == 5)
        #expect(fixture.transport.requests(to: "/api/v1/auth/apple").first?.bearer == "access-1")  // the bearer was sent, and is hidden below

        var texts: [String] = []
        for error in errors { texts += [String(describing: error), String(reflecting: error), error.localizedDescription] }
        let requests = fixture.transport.requests
        let state = await session.state
        for value in [requests as Any, state as Any, errors as Any, nonce as Any, try fixture.store.load() as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts += [String(describing: value), String(reflecting: value), dumped]
        }
        for text in texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) leaked in: \(text)") }
        }
    }
}
