import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 16, item 8: the app's own API through the SDK against a live server.
@Suite struct AppAPIEndToEndTests {
    /// Seed 000's `POST /api/v1/compose/stream`: the first event reaches the app before the server sends the second.
    @Test func bytesDeliversAStreamedBodyAsItArrives() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            var request = URLRequest(url: server.url.appendingPathComponent("api/v1/compose/stream"))
            request.httpMethod = "POST"
            let (bytes, response) = try await session.bytes(for: request, policy: .bearer)
            #expect(response.statusCode == 200)
            var events: [String] = []
            for try await line in bytes.lines where !line.isEmpty {
                events.append(line)
                server.stream.clientSawTheFirstEvent()
            }
            #expect(events == ["data: one", "data: two"])
            #expect(!server.stream.timedOut, "the body was buffered: the first event arrived only with the second")
            #expect(server.seen.last?.authorization == "Bearer \(try #require(try app.store.load()?.session?.accessToken))")
        }
    }

    @Test func dataReachesAnAppRouteWithTheDeviceIDForAGuestOnly() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.continueAsGuest()
            let echo = URLRequest(url: server.url.appendingPathComponent("api/v1/assets/echo"))
            #expect(try await session.data(for: echo, policy: .deviceIDForGuests).1.statusCode == 200)
            #expect(server.seen.last?.deviceID == (try await session.deviceID().uuidString.lowercased()))
            try await session.registerDevice()
            _ = try await session.data(for: echo, policy: .deviceIDForGuests)
            #expect(server.seen.last?.deviceID == nil)
            #expect(server.seen.last?.authorization != nil)
        }
    }
}
