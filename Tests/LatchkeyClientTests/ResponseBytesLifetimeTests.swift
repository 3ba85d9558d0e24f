import Foundation
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 30, item 3: a streamed body's request ends with its reader, and a reader that stops reading does not make the
/// SDK buffer without bound. Against a live loopback server whose one route streams forever.
@Suite(.timeLimit(.minutes(1))) struct ResponseBytesLifetimeTests {
    /// A session sending through a real `URLSessionTransport` to `server`.
    static func session(_ server: EndlessStreamServer, bodyBufferLimit: Int) -> LatchkeySession {
        LatchkeySession(
            configuration: .init(serverURL: server.url), secureStore: InMemorySecureStore(), defaults: InMemoryKeyValueStore(),
            transport: URLSessionTransport(bodyBufferLimit: bodyBufferLimit), clock: ManualLatchkeyClock())
    }

    /// More than the server ever writes: only the reader going away can end the request.
    static let unbounded = 1 << 30

    @Test func breakingOutOfTheLoopClosesTheConnectionWhileTheBytesAreStillHeld() async throws {
        let server = try EndlessStreamServer()
        defer { server.stop() }
        let session = Self.session(server, bodyBufferLimit: Self.unbounded)
        let (bytes, response) = try await session.bytes(for: URLRequest(url: server.url.appendingPathComponent("events")), policy: .none)
        #expect(response.statusCode == 200)
        var events = 0
        for try await line in bytes.lines where !line.isEmpty {
            events += 1
            if events == 3 { break }
        }
        #expect(events == 3)
        #expect(await server.ending() == .clientClosed)
        withExtendedLifetime(bytes) {}
    }

    @Test func aResponseBytesReleasedUnreadClosesTheConnection() async throws {
        let server = try EndlessStreamServer()
        defer { server.stop() }
        let session = Self.session(server, bodyBufferLimit: Self.unbounded)
        _ = try await session.bytes(for: URLRequest(url: server.url.appendingPathComponent("events")), policy: .none)
        #expect(await server.ending() == .clientClosed)
    }

    @Test func cancellingTheReadingTaskClosesTheConnection() async throws {
        let server = try EndlessStreamServer()
        defer { server.stop() }
        let session = Self.session(server, bodyBufferLimit: Self.unbounded)
        let (bytes, _) = try await session.bytes(for: URLRequest(url: server.url.appendingPathComponent("events")), policy: .none)
        let firstLine = Gate()
        let reader = Task {
            for try await _ in bytes.lines { firstLine.open() }
        }
        await firstLine.wait()
        reader.cancel()
        #expect(await server.ending() == .clientClosed)
        await #expect(throws: CancellationError.self) { try await reader.value }
    }

    @Test func aReaderThatStopsReadingIsGivenNoMoreThanTheLimitThenAnError() async throws {
        let server = try EndlessStreamServer()
        defer { server.stop() }
        let limit = 256 << 10
        let session = Self.session(server, bodyBufferLimit: limit)
        let (bytes, _) = try await session.bytes(for: URLRequest(url: server.url.appendingPathComponent("events")), policy: .none)
        var chunks = bytes.chunks.makeAsyncIterator()
        _ = try await chunks.next()  // one piece, then the reader stops reading
        #expect(await server.ending() == .clientClosed)  // the server stopped being read from long before its safety cap

        var buffered = 0
        var ending: (any Error)?
        do {
            while let chunk = try await chunks.next() { buffered += chunk.count }
        } catch {
            ending = error
        }
        #expect((ending as? URLError)?.code == .dataLengthExceedsMaximum)
        #expect(buffered <= limit)
        #expect(buffered > 0)
    }
}
