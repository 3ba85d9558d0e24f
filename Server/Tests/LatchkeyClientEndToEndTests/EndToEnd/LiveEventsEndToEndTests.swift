import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import NIOCore
import NIOPosix
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `session.liveEvents()` and `latchkey-device watch` against a live server serving `GET /api/v1/events`.
///
/// The session here uses the SDK's default transport (`URLSessionWebSocketTask`): where FoundationNetworking's libcurl
/// has no WebSockets (Debian 12, Ubuntu 24.04), its stream must end at once with `.ended(.unsupported)` after one
/// attempt; everywhere else the whole flow runs. `watch` opens its socket with SwiftNIO on Linux, so its flows run
/// everywhere, close codes included.
@Suite(.timeLimit(.minutes(2)))
struct LiveEventsEndToEndTests {
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

    @Test func watchPrintsEachEventAsItArrivesAndExitsZeroOnRevocation() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let token = try #require(try app.credentials()?.session?.accessToken)
            let watch = try await Self.watch(app)
            try await Self.logOut(token, on: server, endingWatch: watch, atLine: 1)
            #expect(try app.credentials()?.session == nil)  // signed out in its state too
        }
    }

    @Test func watchRefreshesOnTokenExpiringSoTheConnectionOutlivesItsFirstToken() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let first = try #require(try app.credentials()?.session?.accessToken)
            let watch = try await Self.watch(app)
            server.clock.advance(by: server.services.configuration.tokens.sessionLifetime - 30)
            server.services.events.sweep()
            #expect(try await watch.line(1).hasPrefix(#"{"expires_at":"#))
            #expect(try await watch.line(1).hasSuffix(#","type":"token.expiring"}"#))
            #expect(try await watch.line(2).hasSuffix(#","type":"reauthenticated"}"#))
            let second = try #require(try app.credentials()?.session?.accessToken)
            #expect(second != first)
            server.clock.advance(by: 60)  // past the first token's exp: no token.expired
            server.services.events.sweep()
            try await Self.logOut(second, on: server, endingWatch: watch, atLine: 3)
        }
    }

    @Test func watchPrintsBudgetChangesAsTheyHappen() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let token = try #require(try app.credentials()?.session?.accessToken)
            let userID = try #require(try app.credentials()?.session?.userID)
            let watch = try await Self.watch(app)
            _ = try await server.services.budgets.setLimit(ofUser: userID, to: 50)
            #expect(try await watch.line(1) == #"{"limit":50,"remaining":50,"type":"budget.changed","used":0}"#)
            try await Self.logOut(token, on: server, endingWatch: watch, atLine: 2)
        }
    }

    /// Close code 4008 arrives as sent (FoundationNetworking on Linux would report 1003): the displaced `watch` says so
    /// and exits 1, the newer one carries on.
    @Test func theOldestWatchPastThePerUserLimitEndsWithTooManyConnections() async throws {
        try await DeviceApp.run(servingEvents: true, configure: { $0.events.maxSocketsPerUser = 1 }) { app, server in
            try await app.register()
            let token = try #require(try app.credentials()?.session?.accessToken)
            let oldest = try await Self.watch(app)
            let newest = try await Self.watch(app)
            #expect(try await oldest.line(1) == #"{"reason":"too_many_connections","type":"ended"}"#)
            #expect(await oldest.exit() == 1)
            try await Self.logOut(token, on: server, endingWatch: newest, atLine: 1)
        }
    }

    /// With a ping a second, a socket that answers none is dropped; `watch`, pinged as often meanwhile, is still on the
    /// same connection (no `reconnecting`) when its session is revoked.
    @Test func watchAnswersTheServersPings() async throws {
        try await DeviceApp.run(servingEvents: true, configure: { $0.events.pingInterval = 1 }) { app, server in
            try await app.register()
            let token = try #require(try app.credentials()?.session?.accessToken)
            let watch = try await Self.watch(app)
            let port = try #require(server.url.port)
            // A raw client that upgrades, then never answers a frame: its end is the clock.
            let silent = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            try await silent.writeAndFlush(
                ByteBuffer(
                    string: "GET /api/v1/events?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"))
            let watchdog = silent.eventLoop.scheduleTask(in: .seconds(20)) {
                silent.close(promise: nil)
                return true
            }
            try await silent.closeFuture.get()
            watchdog.cancel()
            #expect(!((try? await watchdog.futureResult.get()) ?? false), "the server kept a socket that answered no ping for 20 s")
            try await Self.logOut(token, on: server, endingWatch: watch, atLine: 1)
        }
    }

    /// An upgrade the server answers with a status (here 426: a server that does not upgrade `GET /api/v1/events`) ends
    /// `watch` with that status, exit 1, after one attempt.
    @Test func watchExitsOneWithTheStatusOfARefusedUpgrade() async throws {
        try await DeviceApp.run(servingEvents: false) { app, _ in
            try await app.register()
            let watch = try app.start("--json", "watch")
            #expect(try await watch.line(0) == #"{"reason":"refused","status":426,"type":"ended"}"#)
            #expect(await watch.exit() == 1)
            #expect(try app.credentials()?.session != nil)  // still signed in
        }
    }

    /// Logs `token`'s session out as another client would, then expects `watch` to print `session.revoked` as its line
    /// `index` and exit 0.
    /// The backend sets `app_metadata`: `watch` refreshes at once, before it prints `claims.changed`, and goes on with a
    /// token that carries the new claims.
    @Test func watchRefreshesAtOnceWhenTheUsersClaimsChange() async throws {
        try await DeviceApp.run(servingEvents: true) { app, server in
            try await app.register()
            let first = try #require(try app.credentials()?.session?.accessToken)
            let userID = try #require(try app.credentials()?.session?.userID)
            let watch = try await Self.watch(app)
            _ = try await server.services.backend.setAppMetadata(
                .object(["plan": .string("pro")]), ofUser: userID, by: AuditActor(name: "backend", source: "test"))
            #expect(try await watch.line(1) == #"{"type":"claims.changed"}"#)
            #expect(try await watch.line(2).hasSuffix(#","type":"reauthenticated"}"#))
            let second = try #require(try app.credentials()?.session?.accessToken)
            #expect(second != first)
            let payload = try #require(Data(base64Encoded: Self.base64(second.split(separator: ".")[1])))
            #expect(String(decoding: payload, as: UTF8.self).contains(#""app_metadata":{"plan":"pro"}"#))
            try await Self.logOut(second, on: server, endingWatch: watch, atLine: 3)
        }
    }

    private static func base64(_ base64URL: Substring) -> String {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }

    static func logOut(
        _ token: String, on server: LiveServer, endingWatch watch: RunningDeviceApp, atLine index: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(try await server.logout(bearer: token) == 200, sourceLocation: sourceLocation)
        #expect(try await watch.line(index) == #"{"reason":"logout","type":"session.revoked"}"#, sourceLocation: sourceLocation)
        #expect(await watch.exit() == 0, sourceLocation: sourceLocation)
    }

    /// `latchkey-device --json watch`, once it printed `connected`.
    static func watch(_ app: DeviceApp) async throws -> RunningDeviceApp {
        let watch = try app.start("--json", "watch")
        #expect(try await watch.line(0) == #"{"type":"connected"}"#)
        return watch
    }

    /// Whether the SDK's default transport is known to open WebSockets on this platform.
    static var platformHasWebSockets: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }
}

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
