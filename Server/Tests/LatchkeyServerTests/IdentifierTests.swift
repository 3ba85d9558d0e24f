import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// IDs cannot be squatted or reused: claiming one is limited, and a deleted user's ID stays retired.
@Suite struct IdentifierTests {
    @Test func usersRegisterIsLimitedPerClientLikeRegisterDevice() async throws {
        try await withServer(.router, configure: { $0.limits.registerUser.limit = 3 }) { client, _ in
            for _ in 0..<3 {
                #expect(
                    try await client.send(.post, "/api/v1/users/register", body: RegisterUserRequest(userID: UUID().uuidString)).status == .created)
            }
            let limited = try await client.send(.post, "/api/v1/users/register", body: RegisterUserRequest(userID: UUID().uuidString))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.envelope?.error.code == .rateLimited)
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    @Test func theUsersRegisterLimitIsOnByDefault() async throws {
        #expect(LatchkeyConfiguration().limits.registerUser == RateLimitPolicy(name: "register-user", limit: 30, window: 3600))
    }

    @Test(arguments: Transport.allCases)
    func aDeletedUsersIDCannotBeRegisteredAgain(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.send(.delete, "/api/v1/users/me", bearer: device.accessToken).status == .ok)
            let again = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID))
            #expect(again.status == .conflict)
            #expect(again.envelope?.error.code == .userDeleted)
            #expect(!again.text.contains("access_token"))
            let claimed = try await client.send(.post, "/api/v1/users/register", body: RegisterUserRequest(userID: device.userID))
            #expect(claimed.status == .conflict)
            #expect(claimed.envelope?.error.code == .userDeleted)
        }
    }

    @Test(.timeLimit(.minutes(2))) func supportFreesADeletedID() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            #expect(try await client.send(.post, "/api/v1/users/register", body: RegisterUserRequest(userID: device.userID)).status == .conflict)
            let run = try await server.cli("users", "free-id", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(try await client.send(.post, "/api/v1/users/register", body: RegisterUserRequest(userID: device.userID)).status == .created)
            let again = try await server.cli("users", "free-id", device.userID)
            #expect(again.exitCode != 0)
        }
    }
}
