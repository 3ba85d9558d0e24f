import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `GET /metrics`: Prometheus text with requests by route and status, and tokens issued by kind; never public (the test
/// servers set `metrics.token`).
@Suite struct MetricsTests {
    @Test(arguments: Transport.allCases)
    func metricsAreServedAsPrometheusText(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            _ = try await client.registerDevice()
            let response = try await client.send(.get, "/metrics", bearer: TestServer.metricsToken)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(response.text.contains("# TYPE latchkey_http_requests_total counter"))
        }
    }

    @Test(arguments: Transport.allCases)
    func aRegistrationIsCountedAsARequestWithItsStatus(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            _ = try await client.registerDevice()
            let text = try await client.metricsText()
            #expect(metricValue("latchkey_http_requests_total", labels: [#"status="201""#, #"method="POST""#], in: text) == 1)
            #expect(metricValue("latchkey_http_requests_total", labels: ["register-device"], in: text) == 1)
        }
    }

    /// By default (no `metrics.port`, no `metrics.token`) nobody gets the metrics: 404 as for any unknown path, and the
    /// start says why.
    @Test func withoutAPortOrATokenMetricsAreNotServedAndTheStartSaysSo() async throws {
        let logs = LogCapture()
        let server = try await TestServer.make(logger: logs.logger()) { $0.metricsToken = nil }
        try await server.test(.live) { client in
            _ = try await client.registerDevice()
            let answer = try await client.send(.get, "/metrics")
            #expect(answer.status == .notFound)
            #expect(answer.envelope?.error.code == .notFound)
            #expect(!answer.text.contains("latchkey_http_requests_total"))
            #expect(try await client.send(.get, "/metrics", bearer: TestServer.metricsToken).status == .notFound)
        }
        #expect(logs.lines.contains { $0.level == .notice && $0.message.contains("metrics.port") && $0.message.contains("metrics.token") })
    }

    @Test func requestsAreCountedByStatus() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            _ = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID))
            _ = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID))
            let text = try await client.metricsText()
            #expect(metricValue("latchkey_http_requests_total", labels: ["register-device", #"status="201""#], in: text) == 1)
            #expect(metricValue("latchkey_http_requests_total", labels: ["register-device", #"status="401""#], in: text) == 2)
        }
    }

    @Test func requestLatencyIsRecordedByRoute() async throws {
        try await withServer(.router) { client, _ in
            _ = try await client.registerDevice()
            let text = try await client.metricsText()
            #expect(metricValue("latchkey_http_request_duration_seconds_count", labels: ["register-device"], in: text) == 1)
        }
    }

    @Test(arguments: Transport.allCases)
    func aRegistrationCountsOneSessionTokenIssued(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            _ = try await client.registerDevice()
            let text = try await client.metricsText()
            #expect(text.contains("latchkey_tokens_issued_total"))
            #expect(metricValue("latchkey_tokens_issued_total", labels: [#"kind="session""#], in: text) == 1)
        }
    }

    @Test func refreshesCountTokensIssued() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.refresh(device.refreshToken).status == .ok)
            #expect(metricValue("latchkey_tokens_issued_total", labels: [#"kind="session""#], in: try await client.metricsText()) == 2)
        }
    }

    @Test func metricsNeverContainTokensOrSecrets() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            _ = try await client.refresh(device.refreshToken)
            _ = try await client.validate(device.accessToken)
            let text = try await client.metricsText()
            #expect(!text.contains(device.accessToken))
            #expect(!text.contains(device.refreshToken))
            #expect(!text.contains(try #require(device.deviceSecret)))
        }
    }
}
