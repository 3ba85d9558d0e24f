import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/register-device` and `POST /api/v1/users/register`.
@Suite struct DeviceRegistrationTests {
    static let registerDevice = "/api/v1/auth/register-device"
    static let registerUser = "/api/v1/users/register"

    // MARK: register-device

    @Test(arguments: Transport.allCases)
    func aNewDeviceGets201WithASecretAndItsUUIDAsUserID(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let deviceID = UUID()
            let response = try await client.send(.post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
            #expect(response.status == .created)
            let tokens = try response.decode(TokenPairResponse.self)
            #expect(tokens.deviceSecret?.isEmpty == false)
            #expect(tokens.userID == deviceID.uuidString.lowercased())
            #expect(tokens.tokenType == "Bearer")
            #expect(tokens.expiresIn == Int(server.services.configuration.tokens.sessionLifetime))
            #expect(tokens.refreshTokenExpiresIn == Int(server.services.configuration.tokens.refreshLifetime))
            #expect(!tokens.refreshToken.isEmpty)
            #expect(!tokens.sessionID.isEmpty)
        }
    }

    @Test func theAccessTokenOfANewDeviceNamesTheDeviceAsSubject() async throws {
        try await withServer(.router) { client, server in
            let deviceID = UUID()
            let tokens = try await client.registerDevice(deviceID)
            let claims = try Forge.claims(of: tokens.accessToken)
            #expect(claims.subject == deviceID.uuidString.lowercased())
            #expect(claims.subject == tokens.userID)
            #expect(claims.sessionID == tokens.sessionID)
            #expect(claims.deviceID == deviceID.uuidString.lowercased())
            #expect(claims.kind == .session)
            #expect(claims.issuer == TestServer.issuer)
            #expect(claims.expiresAt == Int64(server.clock.now().timeIntervalSince1970) + 900)
        }
    }

    @Test(arguments: Transport.allCases)
    func aKnownDeviceWithoutItsSecretIs401(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.send(.post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: first.userID))
            expectUnauthorized(response, code: .invalidDeviceSecret)
            #expect(!response.text.contains("access_token"))
        }
    }

    @Test func aKnownDeviceWithAWrongSecretIs401() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.send(
                .post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: first.userID, deviceSecret: "not-the-secret"))
            expectUnauthorized(response, code: .invalidDeviceSecret)
        }
    }

    @Test func anotherDevicesSecretDoesNotOpenADevice() async throws {
        try await withServer(.router) { client, _ in
            let victim = try await client.registerDevice()
            let attacker = try await client.registerDevice()
            let response = try await client.send(
                .post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: victim.userID, deviceSecret: attacker.deviceSecret))
            expectUnauthorized(response, code: .invalidDeviceSecret)
        }
    }

    @Test(arguments: Transport.allCases)
    func aKnownDeviceWithItsSecretGets200AndANewSessionWithoutASecret(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.send(
                .post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: first.userID, deviceSecret: first.deviceSecret))
            #expect(response.status == .ok)
            let again = try response.decode(TokenPairResponse.self)
            #expect(again.deviceSecret == nil)
            #expect(!response.text.contains("device_secret"))
            #expect(again.userID == first.userID)
            #expect(again.sessionID != first.sessionID)
            #expect(again.refreshToken != first.refreshToken)
            #expect(try Forge.claims(of: again.accessToken).sessionID == again.sessionID)
        }
    }

    @Test func theDeviceSecretKeepsWorkingForLaterRegistrations() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            let third = try await client.registerAgain(first)
            #expect(Set([first.sessionID, second.sessionID, third.sessionID]).count == 3)
        }
    }

    @Test func aRefusedRegistrationLeavesTheDevicesSessionWorking() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            _ = try await client.send(.post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: first.userID, deviceSecret: "guess"))
            try await expectAccepted(first.accessToken, by: client)
            #expect(try await client.refresh(first.refreshToken).status == .ok)
        }
    }

    @Test(arguments: [(false, true), (true, false)])
    func uppercaseAndLowercaseUUIDsNameTheSameDevice(firstUppercase: Bool, thenUppercase: Bool) async throws {
        try await withServer(.router) { client, _ in
            let deviceID = UUID()
            func spelled(_ uppercase: Bool) -> String { uppercase ? deviceID.uuidString.uppercased() : deviceID.uuidString.lowercased() }
            let created = try await client.send(.post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: spelled(firstUppercase)))
            #expect(created.status == .created)
            let first = try created.decode(TokenPairResponse.self)

            let withoutSecret = try await client.send(.post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: spelled(thenUppercase)))
            expectUnauthorized(withoutSecret, code: .invalidDeviceSecret)

            let withSecret = try await client.send(
                .post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: spelled(thenUppercase), deviceSecret: first.deviceSecret))
            #expect(withSecret.status == .ok)
            #expect(try withSecret.decode(TokenPairResponse.self).userID == first.userID)
        }
    }

    @Test(arguments: Transport.allCases)
    func aUUIDRegisteredThroughUsersRegisterCannotBeTakenOverByRegisterDevice(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let deviceID = UUID()
            let registered = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: deviceID.uuidString))
            #expect(registered.status == .created)
            for secret in [nil, "anything"] as [String?] {
                let response = try await client.send(
                    .post, Self.registerDevice, body: RegisterDeviceRequest(deviceID: deviceID.uuidString, deviceSecret: secret))
                // Answered clearly, so the app starts a new device identity instead of retrying a secret for ever.
                #expect(response.status == .conflict)
                #expect(response.envelope?.error.code == .deviceIDClaimed)
                #expect(!response.text.contains("access_token"))
            }
        }
    }

    // MARK: users/register

    @Test(arguments: Transport.allCases)
    func usersRegisterCreatesThenReportsTheExistingUser(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let userID = UUID()
            let first = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: userID.uuidString))
            #expect(first.status == .created)
            #expect(try first.decode(RegisterUserResponse.self) == RegisterUserResponse(userID: userID.uuidString.lowercased(), created: true))

            let second = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: userID.uuidString))
            #expect(second.status == .ok)
            #expect(try second.decode(RegisterUserResponse.self) == RegisterUserResponse(userID: userID.uuidString.lowercased(), created: false))
        }
    }

    @Test func usersRegisterTreatsUppercaseAndLowercaseAsOneUser() async throws {
        try await withServer(.router) { client, _ in
            let userID = UUID()
            let upper = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: userID.uuidString.uppercased()))
            #expect(upper.status == .created)
            let lower = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: userID.uuidString.lowercased()))
            #expect(lower.status == .ok)
            #expect(try lower.decode(RegisterUserResponse.self).userID == userID.uuidString.lowercased())
        }
    }

    @Test func usersRegisterAnswersAnAlreadyRegisteredDeviceAsExisting() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: device.userID.uppercased()))
            #expect(response.status == .ok)
            #expect(try response.decode(RegisterUserResponse.self) == RegisterUserResponse(userID: device.userID, created: false))
        }
    }

    @Test func usersRegisterAnswersOnlyUserIDAndCreated() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, Self.registerUser, body: RegisterUserRequest(userID: device.userID))
            let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            #expect(object.map { Set($0.keys) } == ["user_id", "created"])
        }
    }
}
