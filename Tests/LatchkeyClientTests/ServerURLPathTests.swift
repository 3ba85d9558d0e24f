import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 30, item 13: a server URL with a path is honoured, never doubled.
@Suite struct ServerURLPathTests {
    /// A server URL, and the paths of `/api/v1/auth/refresh` and `/.well-known/jwks.json` below it.
    struct Shape: Sendable, CustomTestStringConvertible {
        let serverURL: String
        let refresh: String
        let wellKnown: String
        var testDescription: String { self.serverURL }
    }

    static let shapes = [
        // The server's root.
        Shape(serverURL: "https://auth.example.com", refresh: "/api/v1/auth/refresh", wellKnown: "/.well-known/jwks.json"),
        Shape(serverURL: "https://auth.example.com/", refresh: "/api/v1/auth/refresh", wellKnown: "/.well-known/jwks.json"),
        // Mounted under a prefix behind a proxy.
        Shape(serverURL: "https://example.com/latchkey", refresh: "/latchkey/api/v1/auth/refresh", wellKnown: "/latchkey/.well-known/jwks.json"),
        Shape(serverURL: "https://example.com/latchkey/", refresh: "/latchkey/api/v1/auth/refresh", wellKnown: "/latchkey/.well-known/jwks.json"),
        // A base that already is the API's (seed 002's development base).
        Shape(serverURL: "http://localhost:3000/api/v1", refresh: "/api/v1/auth/refresh", wellKnown: "/.well-known/jwks.json"),
        Shape(serverURL: "https://example.com/auth/api/v1/", refresh: "/auth/api/v1/auth/refresh", wellKnown: "/auth/.well-known/jwks.json"),
        // A proxy that serves the API at /v1 (seed 002's production base).
        Shape(serverURL: "https://api.example.com/v1", refresh: "/v1/auth/refresh", wellKnown: "/.well-known/jwks.json"),
    ]

    @Test(arguments: shapes)
    func pathsGoBelowTheServerURLAsItsDocumentationSays(shape: Shape) async throws {
        let fixture = Fixture { _ in .json(200, Samples.pair(2)) }
        try fixture.storeSession()
        let serverURL = URL(string: shape.serverURL)!
        let session = LatchkeySession(
            configuration: .init(serverURL: serverURL), secureStore: fixture.store, defaults: fixture.defaults, transport: fixture.transport,
            clock: fixture.clock)
        let origin = "\(serverURL.scheme!)://\(serverURL.host!)\(serverURL.port.map { ":\($0)" } ?? "")"
        #expect(try session.url(for: "/api/v1/auth/refresh").absoluteString == origin + shape.refresh)
        #expect(try session.url(for: "/.well-known/jwks.json").absoluteString == origin + shape.wellKnown)
        try await session.refresh()
        #expect(fixture.transport.requests.map(\.url.absoluteString) == [origin + shape.refresh])
    }

    @Test func theQueryOfAPathAndTheQueryItemsAreKept() throws {
        let session = Fixture().session { $0.serverURL = URL(string: "https://api.example.com/v1")! }
        let url = try session.url(for: "/api/v1/assets?prefix=kits", queryItems: [URLQueryItem(name: "key", value: "c++/kit.zip")])
        #expect(url.absoluteString == "https://api.example.com/v1/assets?prefix=kits&key=c%2B%2B/kit.zip")
    }
}
