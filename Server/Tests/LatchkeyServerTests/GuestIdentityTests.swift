import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// A guest token never names a user: anyone who saw a device UUID (it travels in headers by design) can get a guest
/// token for it, so the token must not present its holder as the device's registered user to any verifier.
@Suite struct GuestIdentityTests {
    static func guest(_ client: some TestClientProtocol, device: String) async throws -> String {
        try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: device])
            .decode(GuestSessionResponse.self).accessToken
    }

    @Test(arguments: Transport.allCases)
    func aGuestTokenForARegisteredDeviceDoesNotNameItsUser(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            let guest = try await Self.guest(client, device: device.userID)
            let validation = try await client.validate(guest).decode(ValidateTokenResponse.self)
            #expect(validation.kind == .guest)
            #expect(validation.sub != device.userID)
            #expect(validation.sub == "guest:" + device.userID)
            let claims = try Forge.claims(of: guest)
            #expect(claims.subject != device.userID)
            #expect(claims.deviceID == device.userID)
            // The profile is the guest's, not the user's: no devices, no budget.
            let profile = try await client.me(guest).decode(UserProfile.self)
            #expect(profile.userID != device.userID)
            #expect(profile.budget == nil)
        }
    }

    @Test func guestTokensCarryTheGuestAudienceAndEveryAccessTokenIsTypedATJWT() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let guest = try await Self.guest(client, device: UUID().uuidString)
            // A stock verifier configured for the audience `latchkey` refuses guest tokens unless it names theirs too.
            #expect(try Forge.claims(of: guest).audience == "latchkey:guest")
            #expect(try Forge.claims(of: device.accessToken).audience == "latchkey")
            #expect(try Forge.header(of: guest).typ == "at+jwt")
            #expect(try Forge.header(of: device.accessToken).typ == "at+jwt")
        }
    }

    @Test func aGuestTokenRewrittenToTheUsersAudienceOrKindIsRefused() async throws {
        try await withServer(.router) { client, _ in
            let guest = try await Self.guest(client, device: UUID().uuidString)
            expectUnauthorized(try await client.validate(try Forge.rewritingClaims(guest) { $0.audience = "latchkey" }))
            expectUnauthorized(try await client.validate(try Forge.rewritingClaims(guest) { $0.kind = .session }))
        }
    }

    @Test func forwardAuthNeverPassesAGuestOnAsTheDevicesUser() async throws {
        try await withServer(
            .live,
            configure: { configuration in
                configuration.authorizationRules = [AuthorizationRule(method: "*", pathPrefix: "/api", auth: .bearer)]
                configuration.limits.trustedProxies = ["127.0.0.1"]
            }
        ) { client, _ in
            let device = try await client.registerDevice()
            let guest = try await Self.guest(client, device: device.userID)
            let response = try await client.send(
                .get, "/api/v1/authorize", bearer: guest,
                headers: [
                    HTTPField.Name("X-Original-Method")!: "GET", HTTPField.Name("X-Original-URI")!: "/api/photos",
                    HTTPField.Name("X-Device-ID")!: device.userID,
                ])
            #expect(response.status == .ok)
            #expect(response.headers[HTTPField.Name("X-Latchkey-User-Id")!] == nil)
            #expect(response.headers[HTTPField.Name("X-Latchkey-Device-Id")!] == device.userID)
            #expect(response.headers[HTTPField.Name("X-Latchkey-Kind")!] == "guest")
        }
    }

    @Test func theGuestAudienceMustDifferFromTheAudience() async throws {
        await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.make { $0.guestAudienceSetting = "latchkey" }
        }
    }
}
