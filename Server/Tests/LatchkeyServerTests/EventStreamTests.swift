import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import WSClient

/// `GET /api/v1/events` over a real socket: refusals before the upgrade, every event and its close code, the client's
/// `reauthenticate`, the limits and the metrics. Time moves on the servers' manual clock; the expiry sweep is run by
/// hand after moving it.
@Suite struct EventStreamTests {
    static let path = "/api/v1/events"

    @Test func refusedBeforeTheUpgradeWithTheEnvelopeAndWWWAuthenticate() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let expired = try await client.registerDevice()
            server.clock.advance(by: 16 * 60)
            let revoked = try await client.registerDevice()
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: revoked.accessToken).status == .ok)
            let refusedQueries = [
                "", "?token=", "?token=not.a.token", "?token=\(expired.accessToken)", "?token=\(revoked.accessToken)",
                "?token=\(pair.accessToken)&token=\(pair.accessToken)",
            ]
            for query in refusedQueries {
                let response = try await RawHTTPAnswer.get(port: client.port!, Self.path + query)
                #expect(response.status == 401, "\(query.prefix(20))")
                #expect(response.headers["www-authenticate"]?.hasPrefix("Bearer realm=\"latchkey\"") == true)
                #expect(response.headers["connection"] == "close")
                #expect(response.envelope?.error.code == .invalidToken)
            }
            var bearer = Self.upgradeHeaders
            bearer[.authorization] = "Bearer \(revoked.accessToken)"
            #expect(try await RawHTTPAnswer.get(port: client.port!, Self.path, headers: bearer).status == 401)
            // A valid token on a plain GET: 426, and the OpenAPI document names it.
            let fresh = try await client.registerDevice()
            let plain = try await client.send(.get, Self.path + "?token=\(fresh.accessToken)")
            #expect(plain.status == .upgradeRequired)
            #expect(plain.envelope?.error.code == .invalidRequest)
            // An upgrade to another path is answered by that route as if the header were not there.
            let health = try await RawHTTPAnswer.get(port: client.port!, "/api/v1/health")
            #expect(health.status == 200)
            #expect(health.body.count > 0)
        }
    }

    @Test func aLogoutEndsTheSocketWithSessionRevokedAnd4001() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            let connected = try await socket.next()
            #expect(connected.type == "connected")
            #expect(connected.userID == pair.userID)
            #expect(connected.sessionID == pair.sessionID)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: pair.accessToken).status == .ok)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "logout")
            #expect(try await socket.closeCode() == 4001)
            try await MultiProcessTests.eventually(within: .seconds(5), "the hub forgetting the closed socket") {
                server.services.events.count() == 0
            }
        }
    }

    @Test func theBearerHeaderWorksAsTheQueryDoesAndEveryReasonIsNamed() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let port = client.port!
            // logout_global from another session of the same user.
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            let global = try await EventSocketClient.open(port: port, token: first.accessToken, inHeader: true)
            #expect(try await global.next().type == "connected")
            _ = try await client.send(.post, "/api/v1/auth/logout", bearer: second.accessToken, body: LogoutRequest(scope: .global))
            #expect(try await global.next().reason == "logout_global")
            #expect(try await global.closeCode() == 4001)

            // reuse_detected: the refresh token used twice, past the grace window.
            let reused = try await client.registerDevice()
            let reuse = try await EventSocketClient.open(port: port, token: reused.accessToken)
            #expect(try await reuse.next().type == "connected")
            let successor = try await client.refresh(reused.refreshToken).decode(TokenPairResponse.self)
            _ = try await client.refresh(successor.refreshToken)
            server.clock.advance(by: 120)
            _ = try await client.refresh(reused.refreshToken)
            #expect(try await reuse.next().reason == "reuse_detected")
            #expect(try await reuse.closeCode() == 4001)

            // deleted: user.deleted first.
            let doomed = try await client.registerDevice()
            let deletion = try await EventSocketClient.open(port: port, token: doomed.accessToken)
            #expect(try await deletion.next().type == "connected")
            #expect(try await client.send(.delete, "/api/v1/users/me", bearer: doomed.accessToken).status.code < 300)
            #expect(try await deletion.next().type == "user.deleted")
            #expect(try await deletion.next().reason == "deleted")
            #expect(try await deletion.closeCode() == 4001)

            // admin: support revokes every session (the CLI's path).
            let supported = try await client.registerDevice()
            let admin = try await EventSocketClient.open(port: port, token: supported.accessToken)
            #expect(try await admin.next().type == "connected")
            _ = try await server.services.sessions.revokeSessions(ofUser: supported.userID)
            #expect(try await admin.next().reason == "admin")
            #expect(try await admin.closeCode() == 4001)
        }
    }

    @Test func expiryWarnsAMinuteAheadThenEndsWith4002UnlessReauthenticated() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let lifetime = server.services.configuration.tokens.sessionLifetime
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            server.clock.advance(by: lifetime - 61)
            server.services.events.sweep()
            // Nothing yet: an unknown frame's error is the next thing heard.
            socket.send(#"{"type":"hello"}"#)
            #expect(try await socket.next().error == "unknown_type")
            server.clock.advance(by: 2)
            server.services.events.sweep()
            let expiring = try await socket.next()
            #expect(expiring.type == "token.expiring")
            #expect(expiring.expiresAt != nil)
            server.clock.advance(by: 60)
            server.services.events.sweep()
            #expect(try await socket.next().type == "token.expired")
            #expect(try await socket.closeCode() == 4002)

            // With a newer token sent in time, the socket lives on past the first token's exp.
            let other = try await client.registerDevice()
            let kept = try await EventSocketClient.open(port: client.port!, token: other.accessToken)
            #expect(try await kept.next().type == "connected")
            server.clock.advance(by: lifetime - 30)
            server.services.events.sweep()
            #expect(try await kept.next().type == "token.expiring")
            let refreshed = try await client.refresh(other.refreshToken).decode(TokenPairResponse.self)
            kept.send(try Self.json(SessionEventFrame.reauthenticate(refreshed.accessToken)))
            let acknowledged = try await kept.next()
            #expect(acknowledged.type == "reauthenticated")
            server.clock.advance(by: 60)
            server.services.events.sweep()
            kept.send("not json")
            #expect(try await kept.next().error == "bad_frame")
            // The session's revocation still reaches it through the new token.
            _ = try await client.send(.post, "/api/v1/auth/logout", bearer: refreshed.accessToken)
            #expect(try await kept.next().reason == "logout")
            #expect(try await kept.closeCode() == 4001)
        }
    }

    @Test func reauthenticateRefusesAnotherUsersOrABadTokenAndKeepsTheSocket() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let stranger = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            socket.send(try Self.json(SessionEventFrame.reauthenticate(stranger.accessToken)))
            #expect(try await socket.next().error == "wrong_user")
            socket.send(try Self.json(SessionEventFrame.reauthenticate("forged.token.here")))
            let refused = try await socket.next()
            #expect(refused.error == "invalid_token")
            #expect(refused.message?.contains("forged") == false)
            socket.send(#"{"type":"reauthenticate"}"#)
            #expect(try await socket.next().error == "bad_frame")
            socket.send(#"[1,2,3]"#)
            #expect(try await socket.next().error == "bad_frame")
            socket.sendBinary([1, 2, 3])
            #expect(try await socket.next().error == "bad_frame")
            // The stranger's logout is not this socket's business; its own still is.
            _ = try await client.send(.post, "/api/v1/auth/logout", bearer: stranger.accessToken)
            _ = try await client.send(.post, "/api/v1/auth/logout", bearer: pair.accessToken)
            #expect(try await socket.next().reason == "logout")
        }
    }

    @Test func budgetChangesAreToldWithLimitUsedAndRemaining() async throws {
        let server = try await TestServer.make { $0.budgets.serviceKey = "usage-key" }
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            let usage = try await client.send(
                .post, "/api/v1/usage", bearer: "usage-key", body: UsageRequest(userID: pair.userID, amount: 7, idempotencyKey: "k1"))
            #expect(usage.status == .ok, "\(usage.text)")
            let changed = try await socket.next()
            #expect(changed.type == "budget.changed")
            #expect(changed.limit == 100)
            #expect(changed.used == 7)
            #expect(changed.remaining == 93)
            _ = try await server.services.budgets.setLimit(ofUser: pair.userID, to: 10)
            let lowered = try await socket.next()
            #expect(lowered.limit == 10)
            #expect(lowered.remaining == 3)
        }
    }

    @Test func theOldestSocketPastThePerUserLimitIsClosedWith4008AndTheClientLimitIs429() async throws {
        let server = try await TestServer.make {
            $0.events.maxSocketsPerUser = 2
            $0.events.maxSocketsPerClient = 3
        }
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let oldest = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await oldest.next().type == "connected")
            let middle = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await middle.next().type == "connected")
            let newest = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await newest.next().type == "connected")
            let displaced = try await oldest.next()
            #expect(displaced.type == "error")
            #expect(displaced.error == "too_many_sockets")
            #expect(try await oldest.closeCode() == 4008)
            try await MultiProcessTests.eventually(within: .seconds(5), "the hub forgetting the displaced socket") {
                server.services.events.count() == 2
            }
            let other = try await client.registerDevice()
            let third = try await EventSocketClient.open(port: client.port!, token: other.accessToken)
            #expect(try await third.next().type == "connected")
            let refused = try await RawHTTPAnswer.get(port: client.port!, Self.path + "?token=\(other.accessToken)")
            #expect(refused.status == 429)
            #expect(refused.headers["retry-after"] != nil)
            #expect(refused.envelope?.error.code == .rateLimited)
        }
    }

    @Test func upgradeFloodsAreRateLimitedPerClient() async throws {
        let server = try await TestServer.make { $0.limits.events.limit = 2 }
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            for _ in 0..<2 {
                let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
                #expect(try await socket.next().type == "connected")
            }
            let refused = try await RawHTTPAnswer.get(port: client.port!, Self.path + "?token=\(pair.accessToken)")
            #expect(refused.status == 429)
            #expect(refused.envelope?.error.code == .rateLimited)
        }
    }

    /// The server pings every `events.ping-interval`; a client that has not answered the last ping by the next is
    /// dropped, and one that answers stays. Runs on the real clock (the pings are NIO timers), at the shortest interval.
    @Test(.timeLimit(.minutes(1))) func aClientThatStopsAnsweringPingsIsDropped() async throws {
        let server = try await TestServer.make { $0.events.pingInterval = 1 }
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let answering = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await answering.next().type == "connected")
            // A raw client that upgrades, then never answers a frame.
            let silent = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: client.port!).get()
            var request = "GET \(Self.path)?token=\(pair.accessToken) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for field in Self.upgradeHeaders { request += "\(field.name.rawName): \(field.value)\r\n" }
            try await silent.writeAndFlush(ByteBuffer(string: request + "\r\n"))
            let watchdog = silent.eventLoop.scheduleTask(in: .seconds(20)) {
                silent.close(promise: nil)
                return true
            }
            try await silent.closeFuture.get()
            watchdog.cancel()
            let fired = (try? await watchdog.futureResult.get()) ?? false
            #expect(!fired, "the server kept a socket that answered no ping for 20 s")
            // The answering client had the same pings and is still served.
            answering.send(#"{"type":"nonsense"}"#)
            #expect(try await answering.next().error == "unknown_type")
        }
    }

    @Test func theRequestLogNeverHoldsTheQueryAndMetricsCountSocketsAndEvents() async throws {
        let logs = LogCapture()
        let server = try await TestServer.make(logger: logs.logger()) { $0.metricsToken = "m" }
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            #expect(try await RawHTTPAnswer.get(port: client.port!, Self.path + "?token=\(pair.accessToken)x").status == 401)
            let metrics = try await client.send(.get, "/metrics", bearer: "m").text
            #expect(metrics.contains("latchkey_event_sockets 1"))
            #expect(metrics.contains(#"latchkey_events_sent_total{type="connected"} 1"#))
            _ = try await client.send(.post, "/api/v1/auth/logout", bearer: pair.accessToken)
            #expect(try await socket.next().type == "session.revoked")
            #expect(try await socket.closeCode() == 4001)
            let logged = logs.lines.map(\.rendered).joined(separator: "\n")
            #expect(logged.contains(Self.path))
            #expect(!logged.contains(pair.accessToken))
            #expect(!logged.contains("token="))
        }
    }

    /// Headers of a WebSocket upgrade request (RFC 6455 4.1).
    static var upgradeHeaders: HTTPFields {
        [.upgrade: "websocket", .connection: "Upgrade", .secWebSocketKey: "dGhlIHNhbXBsZSBub25jZQ==", .secWebSocketVersion: "13"]
    }

    static func json(_ frame: SessionEventFrame) throws -> String {
        String(decoding: try JSONEncoder().encode(frame), as: UTF8.self)
    }
}

/// A WebSocket client of the event stream (Hummingbird's): frames decoded as they come, text sent on demand.
final class EventSocketClient: Sendable {
    private let frames: AsyncStream<SessionEventFrame>
    private let iterator: IteratorBox
    private let outgoing: AsyncStream<WebSocketMessage>.Continuation
    private let task: Task<UInt16?, any Error>

    private final class IteratorBox: @unchecked Sendable {
        var iterator: AsyncStream<SessionEventFrame>.Iterator
        init(_ iterator: AsyncStream<SessionEventFrame>.Iterator) { self.iterator = iterator }
    }

    private init(port: Int, token: String, inHeader: Bool) {
        let (frames, received) = AsyncStream<SessionEventFrame>.makeStream()
        let (sends, outgoing) = AsyncStream<WebSocketMessage>.makeStream()
        self.frames = frames
        self.iterator = IteratorBox(frames.makeAsyncIterator())
        self.outgoing = outgoing
        var configuration = WebSocketClientConfiguration()
        var url = "ws://127.0.0.1:\(port)\(EventStreamTests.path)"
        if inHeader { configuration.additionalHeaders = [.authorization: "Bearer \(token)"] } else { url += "?token=\(token)" }
        var logger = Logger(label: "event-socket-test")
        logger.logLevel = .critical
        self.task = Task { [configuration] in
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                let sender = Task {
                    for await message in sends {
                        switch message {
                        case .text(let text): try? await outbound.write(.text(text))
                        case .binary(let buffer): try? await outbound.write(.binary(buffer))
                        }
                    }
                }
                defer { sender.cancel() }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message, let frame = try? decoder.decode(SessionEventFrame.self, from: Data(text.utf8)) else {
                        continue
                    }
                    received.yield(frame)
                }
                received.finish()
            }
            received.finish()
            return close.map { UInt16(truncatingIfNeeded: Self.number(of: $0.closeCode)) }
        }
    }

    static func open(port: Int, token: String, inHeader: Bool = false) async throws -> EventSocketClient {
        EventSocketClient(port: port, token: token, inHeader: inHeader)
    }

    /// The next frame, within 10 seconds.
    func next(sourceLocation: SourceLocation = #_sourceLocation) async throws -> SessionEventFrame {
        let box = self.iterator
        let frame = try await withThrowingTaskGroup(of: SessionEventFrame?.self) { group in
            group.addTask { await box.iterator.next() }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let frame else { throw TestFailure("no event frame came (line \(sourceLocation.line))") }
        return frame
    }

    func send(_ text: String) { self.outgoing.yield(.text(text)) }
    func sendBinary(_ bytes: [UInt8]) { self.outgoing.yield(.binary(ByteBuffer(bytes: bytes))) }

    /// The code the server closed with.
    func closeCode() async throws -> UInt16? {
        self.outgoing.finish()
        return try await self.task.value
    }

    static func number(of code: WebSocketErrorCode) -> Int {
        switch code {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unacceptableData: 1003
        case .dataInconsistentWithMessage: 1007
        case .policyViolation: 1008
        case .messageTooLarge: 1009
        case .missingExtension: 1010
        case .unexpectedServerError: 1011
        case .unknown(let code): Int(code)
        }
    }
}

/// One HTTP/1.1 request on a connection of its own, read to the end (the server closes it): a WebSocket upgrade is only
/// tried on a connection's first request.
struct RawHTTPAnswer {
    let status: Int
    let headers: [String: String]
    let body: Data

    static func get(port: Int, _ target: String, headers: HTTPFields = EventStreamTests.upgradeHeaders) async throws -> RawHTTPAnswer {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for field in headers { request += "\(field.name.rawName): \(field.value)\r\n" }
        request += "\r\n"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
        var received = ByteBuffer()
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            for try await var chunk in inbound { received.writeBuffer(&chunk) }
        }
        let text = Data(buffer: received)
        guard let split = text.range(of: Data("\r\n\r\n".utf8)) else { throw TestFailure("no HTTP head in \(received.readableBytes) bytes") }
        let lines = String(decoding: text[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return RawHTTPAnswer(status: status, headers: fields, body: Data(text[split.upperBound...]))
    }

    var envelope: ErrorEnvelope? { try? JSONDecoder().decode(ErrorEnvelope.self, from: self.body) }
}
