import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `session.liveEvents()` and `latchkey-device watch` against a live server serving `GET /api/v1/events`, over the SDK's
/// default transport (`URLSessionWebSocketTask`).
///
/// Where FoundationNetworking's libcurl has no WebSockets (Debian 12, Ubuntu 24.04), the stream must end at once with
/// `.ended(.unsupported)` after one attempt, and `watch` must say so and exit 5; everywhere else the whole flow runs.
@Suite(.timeLimit(.minutes(2)))
struct LiveEventsEndToEndTests {
    @available(LatchkeyServer 1.0, *)
    @Test func aLogoutByAnotherClientRevokesTheSessionHere() async throws {
        try await LiveServer.run(servingEvents: true) { server in
            let install = AppInstall(server: server)
            let session = install.launch()
            try await session.registerDevice()
            let token = try #require(try install.store.load()?.session?.accessToken)
            var events = session.liveEvents().makeAsyncIterator()
            let first = await events.next()
            if case .ended(.unsupported) = first {
                #expect(!Self.platformHasWebSockets, "URLSession on Apple platforms opens WebSockets")
                #expect(await events.next() == nil)  // ended for good: no reconnect loop
                #expect(await session.state.isSignedIn)
                return
            }
            #expect(first == .connected)
            #expect(try await server.logout(bearer: token) == 200)
            #expect(await events.next() == .sessionRevoked(.logout))
            #expect(await events.next() == nil)
            #expect(await session.state == .signedOut(reason: .revoked))
            #expect(try install.store.load()?.session == nil)
            await #expect(throws: LatchkeyError.notSignedIn) { try await session.currentUser() }
        }
    }

    @available(LatchkeyServer 1.0, *)
    @Test func watchPrintsEachEventAsItArrivesAndExitsZeroOnRevocation() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let token = try #require(try app.credentials()?.session?.accessToken)
            guard let watch = try await Self.watch(app) else { return }
            #expect(try await server.logout(bearer: token) == 200)
            #expect(await watch.exit() == 0)
            #expect(try await watch.line(1) == #"{"reason":"logout","type":"session.revoked"}"#)
            #expect(try app.credentials()?.session == nil)  // signed out in its state too
        }
    }

    @available(LatchkeyServer 1.0, *)
    @Test func watchRefreshesOnTokenExpiringSoTheConnectionOutlivesItsFirstToken() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let first = try #require(try app.credentials()?.session?.accessToken)
            guard let watch = try await Self.watch(app) else { return }
            server.clock.advance(by: server.services.configuration.tokens.sessionLifetime - 30)
            server.services.events.sweep()
            #expect(try await watch.line(1).hasPrefix(#"{"expires_at":"#))
            #expect(try await watch.line(1).hasSuffix(#","type":"token.expiring"}"#))
            #expect(try await watch.line(2).hasSuffix(#","type":"reauthenticated"}"#))
            let second = try #require(try app.credentials()?.session?.accessToken)
            #expect(second != first)
            server.clock.advance(by: 60)  // past the first token's exp: no token.expired
            server.services.events.sweep()
            #expect(try await server.logout(bearer: second) == 200)
            #expect(await watch.exit() == 0)
            #expect(try await watch.line(3) == #"{"reason":"logout","type":"session.revoked"}"#)
        }
    }

    /// `latchkey-device --json watch`, once it printed `connected`; `nil` (after checking how it ended) where the
    /// platform cannot open WebSockets.
    @available(LatchkeyServer 1.0, *)
    static func watch(_ app: DeviceApp) async throws -> RunningDeviceApp? {
        let watch = try app.start("--json", "watch")
        let first = try await watch.line(0)
        if first.contains(#""reason":"unsupported""#) {
            #expect(!Self.platformHasWebSockets, "URLSession on Apple platforms opens WebSockets")
            #expect(await watch.exit() == 5)
            return nil
        }
        #expect(first == #"{"type":"connected"}"#)
        return watch
    }

    /// Whether the SDK's default transport is known to open WebSockets on this platform.
    @available(LatchkeyServer 1.0, *)
    static var platformHasWebSockets: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }
}

@available(LatchkeyServer 1.0, *)
extension LiveServer {
    /// The status of `POST /api/v1/auth/logout` with `Authorization: Bearer <token>`, sent without the SDK (another
    /// client holding the session's token).
    func logout(bearer token: String) async throws -> Int {
        var request = URLRequest(url: self.url.appendingPathComponent("/api/v1/auth/logout"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
