import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Issue 31, disabled users through `latchkey users disable|enable <id>`, from the text.
@Suite struct Spec31DisabledTests {
    @Test func theCLIDisablesAndEnablesWithExit0Audited() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let disable = try await server.cli("users", "disable", device.userID)
            #expect(disable.exitCode == 0, "\(disable)")
            let enable = try await server.cli("users", "enable", device.userID)
            #expect(enable.exitCode == 0, "\(enable)")
            #expect(try await server.services.audit.events(AuditQuery(action: "user.disable")).count == 1)
            #expect(try await server.services.audit.events(AuditQuery(action: "user.enable")).count == 1)
        }
    }

    @Test func aDisabledUsersAccessTokensAre401AndRefreshAndDeviceSignInAre403() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let second = try await client.registerAgain(device)
            try await expectAccepted(device.accessToken, by: client)
            #expect(try await server.cli("users", "disable", device.userID).exitCode == 0)
            // The CLI is another process: this server hears of it through the revocation feed (revocations.poll-interval).
            try await Spec31.untilRefused(device.accessToken, by: client, server)
            try await expectRefused(device.accessToken, by: client)
            try await expectRefused(second.accessToken, by: client)
            Spec31.expectStatus(try await client.refresh(device.refreshToken), .forbidden, .userDisabled, "refresh")
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            Spec31.expectStatus(again, .forbidden, .userDisabled, "register-device")
        }
    }

    @Test func aDisabledUsersAppleAndGoogleSignInsAre403UserDisabled() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let device = try await client.registerDevice()
            let apple = "001.\(UUID().uuidString)"
            #expect(try await Spec31.appleSignIn(client, server, subject: apple, bearer: device.accessToken).status == .ok)
            #expect(try await Spec31.googleSignIn(client, server, subject: "7777", bearer: device.accessToken).status == .ok)
            #expect(try await server.cli("users", "disable", device.userID).exitCode == 0)
            Spec31.expectStatus(try await Spec31.appleSignIn(client, server, subject: apple), .forbidden, .userDisabled, "apple")
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: "7777"), .forbidden, .userDisabled, "google")
            #expect(try await server.cli("users", "enable", device.userID).exitCode == 0)
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: "7777"), .ok, nil, "google after enabling")
        }
    }

    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason)) func aDisabledUsersPasswordSignInIs403UserDisabled() async throws {
        try await withMailServer { client, server, peer in
            let (email, password) = (newAddress(), "correct horse battery staple")
            let pair = try await client.verifiedAccount(email, password, peer: peer)
            #expect(try await server.cli("users", "disable", pair.userID).exitCode == 0)
            Spec31.expectStatus(try await client.login(email, password), .forbidden, .userDisabled, "password sign-in")
        }
    }

    @Test func enablingDoesNotReviveEndedSessions() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            #expect(try await server.cli("users", "disable", device.userID).exitCode == 0)
            #expect(try await server.cli("users", "enable", device.userID).exitCode == 0)
            try await expectRefused(device.accessToken, by: client)
            let refresh = try await client.refresh(device.refreshToken)
            #expect(refresh.status == .unauthorized, "\(refresh.text)")
            let signedIn = try await client.registerAgain(device)
            try await expectAccepted(signedIn.accessToken, by: client)
        }
    }
}
