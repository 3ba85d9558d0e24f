import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The seed apps' flows, through the SDK, against a live server on an ephemeral port.
@Suite struct SeedFlowTests {
    /// Seed 000 (Stori): register the device UUID → support issues an access code with the `latchkey` CLI →
    /// validate and store → me → asset requests carry X-Device-ID and no Authorization header.
    @Test func stori() async throws {
        // The CLI runs on the system clock; the server's manual clock starts there too.
        try await LiveServer.run(clock: ManualClock(start: Date())) { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            #expect(try await session.registerUser())
            let deviceID = try await session.deviceID().uuidString.lowercased()
            var environment = ProcessRunner.inheritedEnvironment(removingPrefix: "LATCHKEY_")
            environment["LATCHKEY_MASTER_KEY"] = LiveServer.masterKey
            let issued = try await ProcessRunner.run(
                try ProcessRunner.executable(named: "latchkey"),
                arguments: ["access-code", "issue", "--user-id", deviceID, "--note", "ticket 42", "--database", server.databasePath],
                environment: environment, workingDirectory: server.directory)
            #expect(issued.exitCode == 0, "\(issued)")
            let code = try #require(issued.stdoutLines.first)
            app.advance(by: max(0, Date().timeIntervalSince(server.clock.now())))  // to the CLI's time: the code's nbf
            let redeemed = try await session.redeemAccessCode(code)
            #expect(redeemed.kind == .accessCode)
            let me = try await session.currentUser()
            #expect(me.userID == deviceID)
            #expect(me.tokenKind == .accessCode)

            _ = try await session.send(.get("/api/v1/assets/echo", auth: .deviceID))
            #expect(server.seen.last == SeenHeaders.Seen(authorization: nil, deviceID: deviceID))
            _ = try await session.send(.get("/api/v1/assets/echo", auth: .bearer))
            #expect(server.seen.last == SeenHeaders.Seen(authorization: "Bearer \(code)", deviceID: nil))

            // A relaunch restores the code; a code for another device is refused.
            #expect(await app.launch().bootstrap().isSignedIn)
            let other = AppInstall(server: server).launch()
            await expectRefusal(.accessCodeForAnotherDevice) { try await other.redeemAccessCode(code) }
        }
    }

    /// Seed 002 (Mystica): register-device → relaunch bootstraps → expiry → refresh → logout → relaunch is signed out.
    @Test func mystica() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let first = app.launch()
            #expect(await first.bootstrap() == .signedOut())
            let registered = try await first.registerDevice()
            #expect(registered.userID == (try await first.deviceID().uuidString.lowercased()))
            // The device proves itself with its key: no secret was handed out.
            #expect(try app.store.load()?.deviceKey != nil)
            #expect(try app.store.load()?.deviceSecret == nil)

            #expect(await app.launch().bootstrap().isSignedIn)
            #expect(app.transport.count("/api/v1/auth/me") == 1)

            app.advance(by: 1000)  // past the 900 s access-token lifetime
            let tokenBefore = try app.store.load()?.session?.accessToken
            let relaunched = app.launch()
            #expect(await relaunched.bootstrap().isSignedIn)
            #expect(app.transport.count("/api/v1/auth/refresh") == 1)
            let tokenAfter = try #require(try app.store.load()?.session?.accessToken)
            #expect(tokenAfter != tokenBefore)

            try await relaunched.signOut()
            #expect(await app.launch().bootstrap() == .signedOut())
            let check = try await URLSessionTransport().send(
                TransportRequest(
                    method: "GET", url: server.url.appendingPathComponent("api/v1/validate-token"), headers: ["Authorization": "Bearer \(tokenAfter)"]
                ))
            #expect(check.status == 401)

            // The stored device key gets the same account back.
            #expect(try await app.launch().registerDevice().userID == registered.userID)
        }
    }

    /// A token the server expired while the app's clock did not move: 401 → one refresh → retry, and N concurrent
    /// requests share that one refresh.
    @Test func serverSideExpiryIsHealedByOneRefresh() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            server.clock.advance(by: 1000)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { _ = try await session.currentUser() } }
                try await group.waitForAll()
            }
            #expect(app.transport.count("/api/v1/auth/refresh") == 1)
            #expect(await session.state.isSignedIn)
        }
    }

    /// Two processes holding the same refresh token both refresh: the server's grace window answers the loser
    /// with the chain's current token, and nobody is signed out.
    @Test func losingARefreshRaceOnTheServerDoesNotSignOut() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            try await app.launch().registerDevice()
            let copy = InMemorySecureStore(try app.store.load())  // a second process with its own copy of the tokens
            let other = LatchkeySession(
                configuration: .init(serverURL: server.url), secureStore: copy, defaults: app.defaults, transport: URLSessionTransport(),
                clock: app.clock)
            try await app.launch().refresh()
            try await other.refresh()
            #expect(await other.state.isSignedIn)
            #expect(try await other.currentUser().userID == (try app.store.load()?.session?.userID))
        }
    }

    /// Seed 004 (SabaiPics): an external provider's token is sent as the Bearer (a Latchkey token stands in for Clerk's here).
    @Test func sabaiPics() async throws {
        try await LiveServer.run { server in
            let identityProvider = AppInstall(server: server)
            let providerUser = try await identityProvider.launch().registerDevice()
            let providerToken = try #require(try identityProvider.store.load()?.session?.accessToken)

            let app = AppInstall(server: server)
            let session = app.launch { $0.tokenProvider = { _ in providerToken } }
            #expect(await session.bootstrap() == .signedIn(AuthSession(userID: providerUser.userID, kind: .external, expiresAt: nil)))
            _ = try await session.send(.get("/api/v1/assets/echo", auth: .bearer))
            #expect(server.seen.last == SeenHeaders.Seen(authorization: "Bearer \(providerToken)", deviceID: nil))
            #expect(try app.store.load()?.session == nil)  // the provider's token is never stored
        }
    }

    /// Seed 003 (hairstyle app): continue as guest → guest requests carry the bearer and X-Device-ID → a relaunch
    /// restores the guest → once the token is within the 5-minute clock-skew buffer of expiry, launch clears it.
    @Test func hairstyleGuest() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            let limitations = try await session.continueAsGuest()
            #expect(limitations.maxActionsPerDay == 5)
            let deviceID = try await session.deviceID().uuidString.lowercased()
            let guestToken = try #require(try app.store.load()?.session?.accessToken)
            #expect(try await session.currentUser().kind == .guest)

            _ = try await session.send(.get("/api/v1/assets/echo", auth: .bearerAndDeviceID))
            #expect(server.seen.last == SeenHeaders.Seen(authorization: "Bearer \(guestToken)", deviceID: deviceID))

            app.advance(by: 500)  // 400 s left: outside the 300 s skew buffer
            #expect(await app.launch().bootstrap().isSignedIn)
            app.advance(by: 101)  // 299 s left: inside the buffer, and a guest token cannot be refreshed
            #expect(await app.launch().bootstrap() == .signedOut(reason: .sessionExpired))
            #expect(try app.store.load()?.session == nil)
            #expect(app.transport.count("/api/v1/auth/refresh") == 0)
        }
    }
}
