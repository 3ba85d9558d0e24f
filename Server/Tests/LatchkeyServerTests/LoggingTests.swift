import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Logging
import Testing

/// Item 9 of the core issue: one structured line per request with a request id, and no token, secret or
/// Authorization header value ever logged — at any level, trace included.
@Suite struct LoggingTests {
    static let requestIDHeader = HTTPField.Name(LatchkeyHeader.requestID)!

    /// What a session of traffic left behind.
    struct Traffic: Sendable {
        /// Every response, in order; one per request sent.
        var responses: [TestResponse] = []
        /// Every credential that travelled in a request or a response.
        var secrets: [String] = []
        /// Every `Authorization` header value sent.
        var authorizationValues: [String] = []
        let capture: LogCapture

        /// The secrets, with the signature segment of each JWT on its own (a truncated token is still a leak).
        var needles: [String] {
            self.secrets + self.authorizationValues
                + self.secrets.compactMap { secret in
                    let parts = secret.split(separator: ".", omittingEmptySubsequences: false)
                    return parts.count == 3 && parts[2].count >= 16 ? String(parts[2]) : nil
                }
        }

        var requestLines: [CapturedLogLine] { self.capture.lines.filter { $0.message == "request" } }
    }

    /// Drives the flows the issue names through a server logging at `.trace` into a capture.
    func driveTraffic(_ transport: Transport) async throws -> Traffic {
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger())
        return try await server.test(transport) { client in
            var traffic = Traffic(capture: capture)
            func send(_ method: HTTPRequest.Method, _ uri: String, bearer: String? = nil, json: String? = nil) async throws -> TestResponse {
                let response = try await client.send(method, uri, bearer: bearer, json: json)
                traffic.responses.append(response)
                if let bearer { traffic.authorizationValues.append("Bearer \(bearer)") }
                return response
            }
            func json(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }
            func pair(_ response: TestResponse) throws -> TokenPairResponse {
                let pair = try response.decode(TokenPairResponse.self)
                traffic.secrets += [pair.accessToken, pair.refreshToken] + (pair.deviceSecret.map { [$0] } ?? [])
                return pair
            }

            let deviceID = UUID().uuidString
            let first = try pair(try await send(.post, "/api/v1/auth/register-device", json: try json(RegisterDeviceRequest(deviceID: deviceID))))
            let again = try pair(
                try await send(
                    .post, "/api/v1/auth/register-device",
                    json: try json(RegisterDeviceRequest(deviceID: deviceID, deviceSecret: first.deviceSecret))))
            let refreshed = try pair(try await send(.post, "/api/v1/auth/refresh", json: try json(RefreshRequest(refreshToken: first.refreshToken))))
            #expect(try await send(.get, "/api/v1/validate-token", bearer: refreshed.accessToken).status == .ok)
            #expect(try await send(.get, "/api/v1/users/me", bearer: refreshed.accessToken).status == .ok)
            #expect(try await send(.get, "/api/v1/auth/me", bearer: again.accessToken).status == .ok)
            // The successor used: presenting the first token again is reuse.
            _ = try pair(try await send(.post, "/api/v1/auth/refresh", json: try json(RefreshRequest(refreshToken: refreshed.refreshToken))))

            let badRefresh = "made-up-refresh-token-\(UUID().uuidString)"
            traffic.secrets.append(badRefresh)
            #expect(try await send(.post, "/api/v1/auth/refresh", json: try json(RefreshRequest(refreshToken: badRefresh))).status == .unauthorized)
            // Reusing a spent refresh token outside the grace window: the reuse-detection path logs a warning.
            server.clock.advance(by: 60)
            #expect(
                try await send(.post, "/api/v1/auth/refresh", json: try json(RefreshRequest(refreshToken: first.refreshToken))).status
                    == .unauthorized)

            let forged = try Forge.flippingSignatureBit(again.accessToken)
            traffic.secrets.append(forged)
            #expect(try await send(.get, "/api/v1/users/me", bearer: forged).status == .unauthorized)
            #expect(try await send(.get, "/api/v1/validate-token", bearer: forged).status == .unauthorized)
            #expect(try await send(.get, "/api/v1/validate-token", bearer: "not.a.jwt-\(UUID().uuidString)").status == .unauthorized)
            traffic.secrets.append(traffic.authorizationValues.last!.replacingOccurrences(of: "Bearer ", with: ""))

            let other = try pair(
                try await send(.post, "/api/v1/auth/register-device", json: try json(RegisterDeviceRequest(deviceID: UUID().uuidString))))
            _ = try await send(.get, "/api/v1/events?token=\(other.accessToken)")
            _ = try await send(.get, "/api/v1/health?token=\(other.accessToken)&refresh_token=\(other.refreshToken)")

            #expect(try await send(.post, "/api/v1/auth/logout", bearer: again.accessToken, json: #"{"scope": "global"}"#).status == .ok)
            #expect(try await send(.get, "/api/v1/users/me", bearer: again.accessToken).status == .unauthorized)
            return traffic
        }
    }

    @Test(arguments: Transport.allCases)
    func noLogLineContainsATokenASecretOrAnAuthorizationHeader(transport: Transport) async throws {
        let traffic = try await self.driveTraffic(transport)
        #expect(!traffic.capture.lines.isEmpty)
        for line in traffic.capture.lines {
            let rendered = line.rendered
            for needle in traffic.needles where rendered.contains(needle) {
                Issue.record("a log line contains a credential (\(needle.prefix(12))…): \(line.message) [\(line.metadata.keys.sorted())]")
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func everyRequestIsLoggedOnExactlyOneRequestLineWithARequestID(transport: Transport) async throws {
        let traffic = try await self.driveTraffic(transport)
        let lines = traffic.requestLines
        #expect(lines.count == traffic.responses.count)
        let ids = lines.compactMap { $0.metadata["hb.request.id"] }
        #expect(ids.count == lines.count, "every request line has hb.request.id")
        #expect(Set(ids).count == ids.count, "request ids are distinct")
        for line in lines {
            for key in ["method", "path", "status", "duration_ms"] {
                #expect(line.metadata[key] != nil, "request line lacks \(key)")
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func eachResponsesRequestIDIsTheOneOnItsLogLine(transport: Transport) async throws {
        let traffic = try await self.driveTraffic(transport)
        let logged = Dictionary(
            traffic.requestLines.compactMap { line in line.metadata["hb.request.id"].map { ($0, line) } }, uniquingKeysWith: { first, _ in first })
        for response in traffic.responses {
            let id = try #require(response.headers[Self.requestIDHeader], "a response without X-Request-ID")
            let line = logged[id]
            #expect(line != nil, "no request line for X-Request-ID \(id)")
            #expect(line?.metadata["status"] == "\(response.status.code)")
        }
    }

    @Test func theRequestLineLogsThePathWithoutItsQuery() async throws {
        let traffic = try await self.driveTraffic(.router)
        let paths = traffic.requestLines.compactMap { $0.metadata["path"] }
        #expect(paths.contains("/api/v1/events"))
        #expect(paths.contains("/api/v1/health"))
        #expect(!paths.contains { $0.contains("?") })
    }
}
