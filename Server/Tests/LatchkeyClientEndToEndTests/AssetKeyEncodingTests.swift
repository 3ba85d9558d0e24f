import Foundation
import HummingbirdCore
import LatchkeyAPI
import LatchkeyClient
import Testing

/// The SDK writes an asset key into a query; the server reads it back with Hummingbird's `URI`. (Moved here from the
/// SDK's unit tests, which no longer build Hummingbird.)
@Suite struct AssetKeyEncodingTests {
    /// Records each request and answers with one presigned download URL.
    final class RecordingTransport: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [TransportRequest] = []

        var requests: [TransportRequest] { self.lock.withLock { self.recorded } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            self.lock.withLock { self.recorded.append(request) }
            let download = PresignedURL(
                url: "https://s3.example.test/x", method: .get, headers: [:], expiresAt: Date(timeIntervalSince1970: 1_800_000_300))
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: try encoder.encode(download))
        }
    }

    /// Read back the way the server reads its query (Hummingbird's `URI`), a key arrives exactly as the app wrote it.
    @Test(arguments: ["c++/kit 1.zip", "a&b=c.zip", "50%/mix#2.zip", "é/ü+ö.zip"])
    func assetKeysReachTheServerAsWritten(key: String) async throws {
        let transport = RecordingTransport()
        let session = LatchkeySession(
            configuration: LatchkeySession.Configuration(serverURL: URL(string: "https://auth.example.test")!),
            secureStore: InMemorySecureStore(), defaults: InMemoryKeyValueStore(), transport: transport)
        _ = try await session.assetURL(key: key)
        let sent = try #require(transport.requests.first)
        #expect(URI(sent.url.absoluteString).queryParameters["key"].map(String.init) == key)
        #expect(sent.url.query?.contains("+") == false)  // servers and proxies that decode forms would read a `+` as a space
    }
}
