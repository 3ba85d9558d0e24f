import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import NIOPosix
import Testing

/// Connections that never finish a request head, send one that cannot be read, or come in floods: each is answered (or
/// refused) and closed, over raw TCP.
@Suite struct ConnectionGuardTests {
    static let health = "GET /api/v1/health HTTP/1.1\r\nHost: latchkey.test\r\n\r\n"

    @Test(.timeLimit(.minutes(1))) func aHeadThatNeverEndsIsAnswered408AndClosedAfterTheHeaderTimeout() async throws {
        try await withServer(.live, configure: { $0.headerTimeout = 0.2 }) { client, _ in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                // The idle timeout (60 s) no longer applies once a byte has come: the header timeout does.
                try await connection.send("GET /api/v1/health HTTP/1.1\r\nHost: latchkey.test\r\nX-Slow: ")
                let answer = try await connection.response()
                #expect(answer.status == 408)
                #expect(answer.envelope?.error.code == .requestTimeout)
                #expect(answer.headers["connection"] == "close")
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func theHeaderTimeoutAppliesToEveryRequestOfAConnection() async throws {
        try await withServer(.live, configure: { $0.headerTimeout = 0.2 }) { client, _ in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                try await connection.send(Self.health)
                #expect(try await connection.response().status == 200)
                try await connection.send("GET /api/v1/health HTTP/1.1\r\n")
                #expect(try await connection.response().status == 408)
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n", "GET /api/v1/health HTTP/1.1\r\nHost latchkey.test\r\n\r\n", "GET /api/v1/health HTTP/9.9\r\n\r\n",
        "GET /api/v1/health HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET /api/v1/health HTTP/1.1\r\nX: \u{7f}\r\n\r\n", "GET /a\u{e9} HTTP/1.1\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
    ])
    func aMalformedFirstHeadIsAnswered400WithTheEnvelopeAndClosed(head: String) async throws {
        try await withServer(.live) { client, _ in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                try await connection.send(head)
                let answer = try await connection.response()
                #expect(answer.status == 400, "\(head.debugDescription)")
                #expect(answer.envelope?.error.code == .invalidRequest)
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test func aMalformedHeadAfterAnAnsweredRequestIsAnswered400AndClosed() async throws {
        try await withServer(.live) { client, _ in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                try await connection.send(Self.health + "NOT HTTP AT ALL\r\n\r\n")
                #expect(try await connection.response().status == 200)
                let refused = try await connection.response()
                #expect(refused.status == 400 && refused.envelope?.error.code == .invalidRequest)
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test func aMalformedHeadAfterPipelinedRequestsIsAnsweredAfterAllOfThem() async throws {
        try await withServer(.live) { client, _ in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                try await connection.send(Self.health + Self.health + Self.health + "NOT HTTP AT ALL\r\n\r\n")
                for _ in 0..<3 { #expect(try await connection.response().status == 200) }
                #expect(try await connection.response().status == 400)
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test func aChunkedBodyWithAnInvalidChunkSizeIs400WithTheEnvelope() async throws {
        try await withServer(.live) { client, server in
            try await RawConnection.open(port: try #require(client.port)) { connection in
                try await connection.send(
                    "POST /api/v1/auth/register-device HTTP/1.1\r\nHost: latchkey.test\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{\"device_id\": \"\(UUID().uuidString)\"}\r\n0\r\n\r\n")
                let answer = try await connection.response()
                #expect(answer.status == 400)
                #expect(answer.envelope?.error.code == .invalidRequest)
                #expect(await connection.closedByServer())
            }
            #expect(try await client.send(.get, "/api/v1/health").status == .ok)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aConnectionPastMaxConnectionsIsClosedAtOnceAndTheLogSaysWhy() async throws {
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger()) { $0.maxConnections = 3 }
        try await server.test(.live) { client in
            let port = try #require(client.port)
            #expect(try await client.send(.get, "/api/v1/health").status == .ok)  // the test client's own connection
            try await RawConnection.open(port: port) { first in
                try await first.send(Self.health)
                #expect(try await first.response().status == 200)
                try await RawConnection.open(port: port) { second in
                    try await second.send(Self.health)
                    #expect(try await second.response().status == 200)
                    try await RawConnection.open(port: port) { refused in
                        try? await refused.send(Self.health)
                        #expect(await refused.closedByServer())
                        #expect(refused.received.readableBytes == 0)
                    }
                }
            }
            let lines = capture.lines.filter { $0.message.contains("http.max-connections") }
            #expect(lines.count == 1 && lines.first?.level == .warning)
            // Once connections end there is room again (the server sees each end a moment after the client does).
            var answered = false
            for _ in 0..<200 where !answered {
                try await RawConnection.open(port: port) { again in
                    try? await again.send(Self.health)
                    answered = (try? await again.response().status) == 200
                }
            }
            #expect(answered)
        }
    }
}

/// A raw TCP connection to a test server: bytes out, responses in, and whether the server closed it. A watchdog closes
/// it from this side after 10 s, so a server that never answers fails the test instead of hanging it.
final class RawConnection {
    struct Answer {
        let status: Int
        let headers: [String: String]
        let body: Data
        var envelope: ErrorEnvelope? { try? JSONDecoder().decode(ErrorEnvelope.self, from: self.body) }
    }

    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let watchdog: Scheduled<Bool>
    /// Bytes read and not yet taken as a response.
    private(set) var received = ByteBuffer()
    private var ended = false

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        watchdog: Scheduled<Bool>
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.watchdog = watchdog
    }

    /// Connects to `port` and runs `body`. `waitingForListener` tries to connect again for up to 5 s, for a listener that
    /// starts beside the API's (`admin.port`, `metrics.port`).
    static func open(port: Int, waitingForListener: Bool = false, _ body: (RawConnection) async throws -> Void) async throws {
        let channel = try await Self.connect(port: port, attempts: waitingForListener ? 100 : 1)
        let raw = channel.channel
        let watchdog = raw.eventLoop.scheduleTask(in: .seconds(10)) {
            raw.close(promise: nil)
            return true
        }
        try await channel.executeThenClose { inbound, outbound in
            try await body(RawConnection(inbound: inbound.makeAsyncIterator(), outbound: outbound, watchdog: watchdog))
        }
        watchdog.cancel()
    }

    private static func connect(port: Int, attempts: Int) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        var attempt = 1
        while true {
            do {
                return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
            } catch {
                guard attempt < attempts else { throw error }
                attempt += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    func send(_ text: String) async throws { try await self.outbound.write(ByteBuffer(string: text)) }

    /// The next whole response (its head and its `Content-Length` body).
    func response() async throws -> Answer {
        while true {
            let view = Data(self.received.readableBytesView)
            if let split = view.range(of: Data("\r\n\r\n".utf8)) {
                let lines = String(decoding: view[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                let headLength = split.upperBound - view.startIndex
                if view.count >= headLength + length {
                    self.received.moveReaderIndex(forwardBy: headLength + length)
                    let status = lines[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                    return Answer(status: status, headers: headers, body: Data(view[split.upperBound..<(split.upperBound + length)]))
                }
            }
            guard !self.ended, var chunk = try await self.inbound.next() else {
                self.ended = true
                throw TestFailure("the connection ended before a whole response (\(self.received.readableBytes) bytes)")
            }
            self.received.writeBuffer(&chunk)
        }
    }

    /// Reads to the end: true when the server closed the connection, false when the watchdog had to.
    func closedByServer() async -> Bool {
        while !self.ended {
            do {
                guard var chunk = try await self.inbound.next() else { break }
                self.received.writeBuffer(&chunk)
            } catch {
                break  // a reset is a close too
            }
        }
        self.ended = true
        self.watchdog.cancel()
        return !((try? await self.watchdog.futureResult.get()) ?? false)
    }
}
