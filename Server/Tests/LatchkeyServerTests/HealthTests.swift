import HummingbirdTesting
import LatchkeyAPI
import Testing

@Suite struct HealthTests {
    @Test(arguments: Transport.allCases)
    func livenessAnswersOKWithVersion(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.get, "/api/v1/health")
            #expect(response.status == .ok)
            #expect(try response.decode(HealthResponse.self) == HealthResponse(status: "ok", version: LatchkeyVersion.current))
            #expect(response.headers[.init("X-Request-ID")!] != nil)
        }
    }

    @Test(arguments: Transport.allCases)
    func readinessReportsTheDatabase(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.get, "/api/v1/health/ready")
            #expect(response.status == .ok)
            #expect(try response.decode(ReadinessResponse.self) == ReadinessResponse(status: "ready", database: "ok"))
        }
    }

    @Test func readinessIs503WhenTheDatabaseIsClosed() async throws {
        let server = try await TestServer.make()
        await server.close()
        try await server.test(.router) { client in
            let response = try await client.send(.get, "/api/v1/health/ready")
            #expect(response.status == .serviceUnavailable)
            #expect(response.envelope?.error.code == .serviceUnavailable)
        }
    }

    @Test func unknownPathsGetTheEnvelope() async throws {
        try await withServer(.live) { client, _ in
            let response = try await client.send(.get, "/api/v1/nothing-here")
            #expect(response.status == .notFound)
            #expect(response.envelope?.error.code == .notFound)
        }
    }
}
