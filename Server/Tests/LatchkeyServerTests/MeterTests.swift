import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// ``MeterMiddleware`` on an embedding backend's own route (seed 003: 5 successful edits a day per device).
@Suite struct MeterTests {
    /// A backend embedding Latchkey: `POST /app/edit` behind the bearer authenticator and the `actions` meter;
    /// it answers 200, or 500 when asked to fail (`?fail=1`).
    static func withBackend<T: Sendable>(
        _ transport: Transport = .router, meter: Meter = Meter(name: "actions", guestLimit: 5, userLimit: 0),
        configure: (inout LatchkeyConfiguration) -> Void = { _ in }, _ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T
    ) async throws -> T {
        let server = try await TestServer.make {
            $0.meters = [meter.name: meter]
            configure(&$0)
        }
        defer { try? FileManager.default.removeItem(at: server.directory) }
        let router = buildRouter(services: server.services)
        router.group("app")
            .add(middleware: BearerAuthenticator(verifier: server.services.verifier))
            .add(middleware: MeterMiddleware(meter: meter.name, services: server.services))
            .post("edit") { request, _ -> Response in
                request.uri.queryParameters.get("fail") == nil ? Response(status: .ok) : Response(status: .internalServerError)
            }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: server.logger)
        do {
            let result = try await app.test(transport.setup) { client in try await body(client, server) }
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }

    static func guestToken(_ client: some TestClientProtocol, device: String) async throws -> String {
        try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: device]).decode(GuestSessionResponse.self)
            .accessToken
    }

    static func edit(_ client: some TestClientProtocol, token: String, device: String?, fail: Bool = false) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let device { headers[HTTPField.Name("X-Device-ID")!] = device }
        return try await client.send(.post, fail ? "/app/edit?fail=1" : "/app/edit", bearer: token, headers: headers)
    }

    static func header(_ response: TestResponse, _ name: String) -> String? { response.headers[HTTPField.Name(name)!] }

    @Test(arguments: Transport.allCases)
    func aGuestDeviceGetsFiveEditsADayAndTheSixthIs429(transport: Transport) async throws {
        try await Self.withBackend(transport) { client, _ in
            let device = UUID().uuidString
            let token = try await Self.guestToken(client, device: device)
            for remaining in (0..<5).reversed() {
                let response = try await Self.edit(client, token: token, device: device)
                #expect(response.status == .ok)
                #expect(Self.header(response, "X-RateLimit-Limit") == "5")
                #expect(Self.header(response, "X-RateLimit-Remaining") == String(remaining))
            }
            let sixth = try await Self.edit(client, token: token, device: device)
            #expect(sixth.status == .tooManyRequests)
            #expect(sixth.envelope?.error.code == .rateLimited)
            #expect(Self.header(sixth, "Retry-After") == "86400")
        }
    }

    @Test func aNewGuestTokenDoesNotResetTheDevicesCount() async throws {
        try await Self.withBackend(meter: Meter(name: "actions", guestLimit: 2, userLimit: 0)) { client, _ in
            let device = UUID().uuidString
            let first = try await Self.guestToken(client, device: device)
            #expect(try await Self.edit(client, token: first, device: device).status == .ok)
            #expect(try await Self.edit(client, token: first, device: device).status == .ok)
            let second = try await Self.guestToken(client, device: device)
            #expect(try await Self.edit(client, token: second, device: device).status == .tooManyRequests)
        }
    }

    @Test func onlySuccessfulCallsCount() async throws {
        try await Self.withBackend(meter: Meter(name: "actions", guestLimit: 1, userLimit: 0)) { client, _ in
            let device = UUID().uuidString
            let token = try await Self.guestToken(client, device: device)
            let failed = try await Self.edit(client, token: token, device: device, fail: true)
            #expect(failed.status == .internalServerError)
            #expect(Self.header(failed, "X-RateLimit-Remaining") == "1")
            #expect(try await Self.edit(client, token: token, device: device).status == .ok)
            #expect(try await Self.edit(client, token: token, device: device).status == .tooManyRequests)
        }
    }

    @Test func theWindowRollsAfterADay() async throws {
        try await Self.withBackend(meter: Meter(name: "actions", guestLimit: 1, userLimit: 0)) { client, server in
            let device = UUID().uuidString
            let token = try await Self.guestToken(client, device: device)
            #expect(try await Self.edit(client, token: token, device: device).status == .ok)
            server.clock.advance(by: 86_401)
            let fresh = try await Self.guestToken(client, device: device)
            #expect(try await Self.edit(client, token: fresh, device: device).status == .ok)
        }
    }

    @Test func fiftyParallelCallsAgainstALimitOfFiveLetExactlyFiveThrough() async throws {
        try await Self.withBackend { client, _ in
            let device = UUID().uuidString
            let token = try await Self.guestToken(client, device: device)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.edit(client, token: token, device: device).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 5)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 45)
        }
    }

    /// Device IDs are the client's to make up, so a guest's actions are also counted per client network
    /// (`limits.guest-per-network`): an IPv6 client by its /64, whatever device it names; failed actions are not counted.
    @Test func freshDeviceIDsDoNotEscapeTheGuestLimitPerNetwork() async throws {
        try await Self.withBackend(
            .live,
            configure: { configuration in
                configuration.limits.trustedProxies = ["127.0.0.1"]
                configuration.limits.guestPerNetwork.limit = 6
            }
        ) { client, _ in
            func edit(from address: String, device: String, token: String, fail: Bool = false) async throws -> TestResponse {
                let headers: HTTPFields = [HTTPField.Name("X-Device-ID")!: device, HTTPField.Name("X-Forwarded-For")!: address]
                return try await client.send(.post, fail ? "/app/edit?fail=1" : "/app/edit", bearer: token, headers: headers)
            }
            func guest(from address: String) async throws -> (device: String, token: String) {
                let device = UUID().uuidString
                let headers: HTTPFields = [HTTPField.Name("X-Device-ID")!: device, HTTPField.Name("X-Forwarded-For")!: address]
                let token = try await client.send(.post, "/api/v1/auth/guest", headers: headers).decode(GuestSessionResponse.self).accessToken
                return (device, token)
            }
            let first = try await guest(from: "2001:db8:1:2::1")
            for _ in 1...5 { #expect(try await edit(from: "2001:db8:1:2::1", device: first.device, token: first.token).status == .ok) }
            // A new device ID from another address of the same /64: its own meter is fresh, the network's is not.
            let second = try await guest(from: "2001:db8:1:2::2")
            #expect(try await edit(from: "2001:db8:1:2::2", device: second.device, token: second.token, fail: true).status == .internalServerError)
            #expect(try await edit(from: "2001:db8:1:2::2", device: second.device, token: second.token).status == .ok)
            let held = try await edit(from: "2001:db8:1:2::2", device: second.device, token: second.token)
            #expect(held.status == .tooManyRequests)
            #expect(held.envelope?.error.code == .rateLimited)
            #expect(Self.header(held, "X-RateLimit-Limit") == "6")
            #expect(Self.header(held, "Retry-After") != nil)
            // Another network is another client.
            let other = try await guest(from: "2001:db8:1:3::1")
            #expect(try await edit(from: "2001:db8:1:3::1", device: other.device, token: other.token).status == .ok)
        }
    }

    @Test func aGuestWithoutXDeviceIDGets400NamingTheHeader() async throws {
        try await Self.withBackend { client, _ in
            let token = try await Self.guestToken(client, device: UUID().uuidString)
            let response = try await Self.edit(client, token: token, device: nil)
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.message.contains("X-Device-ID") == true)
        }
    }

    @Test func withoutATokenTheRouteIs401() async throws {
        try await Self.withBackend { client, _ in
            let response = try await client.send(.post, "/app/edit")
            #expect(response.status == .unauthorized)
        }
    }

    @Test func signedInUsersAreMeteredPerUserWithTheirOwnLimit() async throws {
        try await Self.withBackend(meter: Meter(name: "actions", guestLimit: 1, userLimit: 2)) { client, _ in
            let user = try await client.registerDevice()
            #expect(try await Self.edit(client, token: user.accessToken, device: nil).status == .ok)
            #expect(try await Self.edit(client, token: user.accessToken, device: nil).status == .ok)
            #expect(try await Self.edit(client, token: user.accessToken, device: nil).status == .tooManyRequests)
        }
    }

    @Test func aLimitOfZeroLeavesUsersUnmetered() async throws {
        try await Self.withBackend { client, _ in
            let user = try await client.registerDevice()
            for _ in 0..<8 {
                let response = try await Self.edit(client, token: user.accessToken, device: nil)
                #expect(response.status == .ok)
                #expect(Self.header(response, "X-RateLimit-Limit") == nil)
            }
        }
    }
}

extension MeterTests {
    @Test func theDefaultActionsMeterFollowsTheGuestLimitationAndMetersAreConfigurable() async throws {
        let defaults = try await LatchkeyConfiguration.load(overrides: ["guest.max-actions-per-day": .int(3)], configFile: nil)
        #expect(defaults.meters["actions"] == Meter(name: "actions", window: 86_400, guestLimit: 3, userLimit: 0))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-meters-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"meters": {"names": ["exports"], "exports": {"window": 3600, "guest-limit": 0, "user-limit": 10}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let configured = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(configured.meters == ["exports": Meter(name: "exports", window: 3600, guestLimit: 0, userLimit: 10)])
    }
}

extension MeterTests {
    @Test func aGuestCannotEscapeTheMeterByChangingXDeviceID() async throws {
        try await Self.withBackend(meter: Meter(name: "actions", guestLimit: 1, userLimit: 0)) { client, _ in
            let device = UUID().uuidString
            let token = try await Self.guestToken(client, device: device)
            #expect(try await Self.edit(client, token: token, device: device).status == .ok)
            let other = try await Self.edit(client, token: token, device: UUID().uuidString)
            #expect(other.status == .forbidden)
            #expect(other.envelope?.error.message.contains("X-Device-ID") == true)
        }
    }
}
