import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/guest` (seed 003): a short-lived guest token for the device in `X-Device-ID`.
@Suite struct GuestTests {
    static func startGuest(_ client: some TestClientProtocol, deviceID: String) async throws -> TestResponse {
        try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: deviceID])
    }

    @Test(arguments: Transport.allCases)
    func aGuestGets201WithAFifteenMinuteTokenAndItsLimitationsButNoRefreshToken(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = UUID()
            let response = try await Self.startGuest(client, deviceID: device.uuidString)
            #expect(response.status == .created)
            let guest = try response.decode(GuestSessionResponse.self)
            #expect(guest.expiresIn == 900)
            #expect(guest.tokenType == "Bearer")
            #expect(guest.limitations == GuestLimitations(maxActionsPerDay: 5, featuresDisabled: []))
            #expect(!response.text.contains("refresh_token"))
            let validation = try await client.send(.get, "/api/v1/validate-token", bearer: guest.accessToken)
            let claims = try validation.decode(ValidateTokenResponse.self)
            #expect(claims.kind == .guest)
            // A guest subject of its own, never the device's (a registered device's ID is its user's ID).
            #expect(claims.sub == "guest:" + device.uuidString.lowercased())
        }
    }

    @Test func theLimitationsComeFromConfiguration() async throws {
        try await withServer(.router, configure: { $0.guestLimitations = GuestLimitations(maxActionsPerDay: 3, featuresDisabled: ["export"]) }) {
            client, _ in
            let guest = try await Self.startGuest(client, deviceID: UUID().uuidString).decode(GuestSessionResponse.self)
            #expect(guest.limitations == GuestLimitations(maxActionsPerDay: 3, featuresDisabled: ["export"]))
        }
    }

    @Test func everyCallGivesANewToken() async throws {
        try await withServer(.router) { client, _ in
            let device = UUID().uuidString
            let first = try await Self.startGuest(client, deviceID: device).decode(GuestSessionResponse.self)
            let second = try await Self.startGuest(client, deviceID: device).decode(GuestSessionResponse.self)
            #expect(first.accessToken != second.accessToken)
        }
    }

    @Test(arguments: Transport.allCases)
    func aMissingDeviceIDHeaderIs400NamingTheHeader(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.post, "/api/v1/auth/guest")
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
            #expect(response.envelope?.error.message.contains("X-Device-ID") == true)
        }
    }

    @Test func aMalformedDeviceIDHeaderIs400NamingTheHeader() async throws {
        try await withServer(.router) { client, _ in
            let response = try await Self.startGuest(client, deviceID: "not-a-uuid")
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidHeader)
            #expect(response.envelope?.error.message.contains("X-Device-ID") == true)
            #expect(response.envelope?.error.message.contains("not-a-uuid") == false)
        }
    }

    @Test func aGuestTokenExpiresAfterItsLifetime() async throws {
        try await withServer(.router) { client, server in
            let guest = try await Self.startGuest(client, deviceID: UUID().uuidString).decode(GuestSessionResponse.self)
            server.clock.advance(by: 899)
            #expect(try await client.send(.get, "/api/v1/validate-token", bearer: guest.accessToken).status == .ok)
            server.clock.advance(by: 2)
            #expect(try await client.send(.get, "/api/v1/validate-token", bearer: guest.accessToken).status == .unauthorized)
        }
    }

    @Test func theGuestLifetimeIsConfigurable() async throws {
        try await withServer(.router, configure: { $0.tokens.guestLifetime = 60 }) { client, _ in
            let guest = try await Self.startGuest(client, deviceID: UUID().uuidString).decode(GuestSessionResponse.self)
            #expect(guest.expiresIn == 60)
        }
    }

    @Test func aGuestsProfileIsTheGuestSubjectAndNothingIsStored() async throws {
        try await withServer(.router) { client, server in
            let device = UUID()
            let guest = try await Self.startGuest(client, deviceID: device.uuidString).decode(GuestSessionResponse.self)
            let profile = try await client.send(.get, "/api/v1/auth/me", bearer: guest.accessToken).decode(UserProfile.self)
            #expect(profile.userID == "guest:" + device.uuidString.lowercased())
            #expect(profile.kind == .guest)
            #expect(profile.tokenKind == .guest)
            #expect(profile.devices.isEmpty)
            #expect(try await server.services.users.users(limit: 10, offset: 0).isEmpty)
        }
    }

    @Test func aGuestCannotLogOutASession() async throws {
        try await withServer(.router) { client, _ in
            let guest = try await Self.startGuest(client, deviceID: UUID().uuidString).decode(GuestSessionResponse.self)
            let response = try await client.send(.post, "/api/v1/auth/logout", bearer: guest.accessToken)
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.code == .forbidden)
        }
    }

    @Test func theGuestLimitPerNetworkIsFiftyADayUnlessConfigured() async throws {
        let defaults = try await LatchkeyConfiguration.load(overrides: [:], configFile: nil).limits.guestPerNetwork
        #expect((defaults.limit, defaults.window) == (50, 86_400))
        let off = try await LatchkeyConfiguration.load(overrides: ["limits.guest-per-network": .int(0)], configFile: nil)
        #expect(off.limits.guestPerNetwork.limit == 0)
    }

    /// Seed 003 through a proxy: a guest who makes up a new device ID after every five actions still gets at most
    /// `limits.guest-per-network` (50) admitted actions a day from one client; 0 switches that off.
    @Test(arguments: [50, 0])
    func freshDeviceIDsGetAtMostFiftyAdmittedActionsADayPerClient(guestPerNetwork: Int) async throws {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.authorizationRules = [AuthorizationRule(method: "POST", pathPrefix: "/api/edit", auth: .bearer, meter: "actions")]
                configuration.limits.trustedProxies = ["127.0.0.1"]
                configuration.limits.guestPerNetwork.limit = guestPerNetwork
                configuration.meters = ["actions": Meter(name: "actions", guestLimit: 5, userLimit: 0)]
            }
        ) { client, server in
            func actions(from address: String, count: Int) async throws -> [HTTPResponse.Status] {
                let device = UUID().uuidString
                let forwarded: HTTPFields = [HTTPField.Name("X-Device-ID")!: device, HTTPField.Name("X-Forwarded-For")!: address]
                let token = try await client.send(.post, "/api/v1/auth/guest", headers: forwarded).decode(GuestSessionResponse.self).accessToken
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<count {
                    var headers = forwarded
                    headers[HTTPField.Name("X-Original-Method")!] = "POST"
                    headers[HTTPField.Name("X-Original-URI")!] = "/api/edit"
                    statuses.append(try await client.send(.get, "/api/v1/authorize", bearer: token, headers: headers).status)
                }
                return statuses
            }
            for _ in 1...10 { #expect(try await actions(from: "203.0.113.7", count: 5) == Array(repeating: .ok, count: 5)) }
            let eleventh = try await actions(from: "203.0.113.7", count: 1)
            #expect(eleventh == [guestPerNetwork == 0 ? .ok : .tooManyRequests])
            #expect(try await actions(from: "198.51.100.1", count: 1) == [.ok])  // another client
            server.clock.advance(by: 86_400)
            #expect(try await actions(from: "203.0.113.7", count: 1) == [.ok])  // a day later
        }
    }
}
