import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The listeners beside the API's — the console's on `admin.port`, the metrics' on `metrics.port` — guard their
/// connections as the API's does (``ConnectionGuardTests``): a head that never ends is answered 408 and closed, one that
/// cannot be read 400 and closed, and each listener keeps its own `http.max-connections`. Over raw TCP.
@Suite struct ListenerGuardTests {
    /// A listener apart from the API's.
    enum Listener: String, CaseIterable, CustomStringConvertible, Sendable {
        case admin
        case metrics

        var description: String { self.rawValue }

        /// A server with this listener on a free port, and that port.
        func withServer(
            configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in },
            _ body: @Sendable @escaping (_ client: any TestClientProtocol, _ port: Int) async throws -> Void
        ) async throws {
            let port = try HardeningTests.freePort()
            try await LatchkeyServerTests.withServer(
                .live,
                configure: { configuration in
                    switch self {
                    case .admin: (configuration.admin.enabled, configuration.admin.port) = (true, port)
                    case .metrics: configuration.metricsPort = port
                    }
                    configure(&configuration)
                }
            ) { client, _ in try await body(client, port) }
        }
    }

    static let consoleLogin = "GET /admin/login HTTP/1.1\r\nHost: latchkey.test\r\n\r\n"

    @Test(.timeLimit(.minutes(1)), arguments: Listener.allCases)
    func aHeadThatNeverEndsIsAnswered408AndClosedAfterTheHeaderTimeout(listener: Listener) async throws {
        try await listener.withServer(configure: { $0.headerTimeout = 0.2 }) { _, port in
            try await RawConnection.open(port: port, waitingForListener: true) { connection in
                try await connection.send("GET /admin/login HTTP/1.1\r\nHost: latchkey.test\r\nX-Slow: ")
                let answer = try await connection.response()
                #expect(answer.status == 408)
                #expect(answer.envelope?.error.code == .requestTimeout)
                #expect(answer.headers["connection"] == "close")
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: Listener.allCases, ["GARBAGE\r\n\r\n", "GET /admin/login HTTP/1.1\r\nHost latchkey.test\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n"])
    func aMalformedHeadIsAnswered400WithTheEnvelopeAndClosed(listener: Listener, head: String) async throws {
        try await listener.withServer { _, port in
            try await RawConnection.open(port: port, waitingForListener: true) { connection in
                try await connection.send(head)
                let answer = try await connection.response()
                #expect(answer.status == 400, "\(head.debugDescription)")
                #expect(answer.envelope?.error.code == .invalidRequest)
                #expect(await connection.closedByServer())
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aMalformedHeadAfterAnAnsweredRequestOnTheConsolesPortIsAnswered400AndClosed() async throws {
        try await Listener.admin.withServer { _, port in
            try await RawConnection.open(port: port, waitingForListener: true) { connection in
                try await connection.send(Self.consoleLogin + "NOT HTTP AT ALL\r\n\r\n")
                #expect(try await connection.response().status == 200)
                let refused = try await connection.response()
                #expect(refused.status == 400 && refused.envelope?.error.code == .invalidRequest)
                #expect(await connection.closedByServer())
            }
        }
    }

    /// A flood that fills the API's port leaves the console reachable; the console's port has a limit of its own.
    @Test(.timeLimit(.minutes(1))) func theConsolesPortCountsItsOwnConnections() async throws {
        try await Listener.admin.withServer(configure: { $0.maxConnections = 2 }) { client, port in
            // The API's port: the test client's own connection and this one fill it.
            let apiPort = try #require(client.port)
            #expect(try await client.send(.get, "/api/v1/health").status == .ok)
            try await RawConnection.open(port: apiPort) { api in
                try await api.send(ConnectionGuardTests.health)
                #expect(try await api.response().status == 200)
                try await Self.expectRefused(port: apiPort, ConnectionGuardTests.health)
                try await RawConnection.open(port: port, waitingForListener: true) { first in
                    try await first.send(Self.consoleLogin)
                    #expect(try await first.response().status == 200)
                    try await RawConnection.open(port: port) { second in
                        try await second.send(Self.consoleLogin)
                        #expect(try await second.response().status == 200)
                        try await Self.expectRefused(port: port, Self.consoleLogin)
                    }
                }
            }
        }
    }

    /// A connection to `port` is closed at once, before any answer to `request`.
    static func expectRefused(port: Int, _ request: String) async throws {
        try await RawConnection.open(port: port) { refused in
            try? await refused.send(request)
            #expect(await refused.closedByServer())
            #expect(refused.received.readableBytes == 0)
        }
    }
}
