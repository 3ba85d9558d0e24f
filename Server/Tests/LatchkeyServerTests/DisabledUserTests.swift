import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// Disabled users: disabling ends every session in one transaction with its webhooks; every sign-in and refresh is
/// 403 `user_disabled` until enabled.
@Suite struct DisabledUserTests {
    @Test func disablingRefusesSignInAndRefreshWithUserDisabled() async throws {
        try await withServer(.live, configure: Backend.configure) { client, _ in
            let device = try await client.registerDevice()
            let disable = try await client.send(.post, Backend.path(device.userID, "disable"), bearer: Backend.key)
            #expect(disable.status == .ok)
            #expect(try Backend.object(disable)["disabled"] as? Bool == true)
            // The refresh token of a session disabling revoked: 403 user_disabled, not 401.
            let refresh = try await client.refresh(device.refreshToken)
            #expect(refresh.status == .forbidden)
            #expect(refresh.envelope?.error.code == .userDisabled)
            // register-device is a sign-in.
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            #expect(again.status == .forbidden)
            #expect(again.envelope?.error.code == .userDisabled)
            // The access token of the ended session stops working too.
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .unauthorized)
        }
    }

    @Test func theUsersSocketsHearSessionRevokedDisabledAndClose() async throws {
        let server = try await TestServer.make(configure: Backend.configure)
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            #expect(try await client.send(.post, Backend.path(pair.userID, "disable"), bearer: Backend.key).status == .ok)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "disabled")
            #expect(try await socket.closeCode() == 4001)
        }
    }

    @Test func accessCodesOfADisabledUserAreRevokedAndCannotBeExchanged() async throws {
        try await withServer(.live, configure: Backend.configure) { client, server in
            let device = try await client.registerDevice()
            let first = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: nil)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: first.code).status == .ok)
            #expect(try await client.send(.post, Backend.path(device.userID, "disable"), bearer: Backend.key).status == .ok)
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: first.code).status == .unauthorized)
            // One issued while disabled is no way in either.
            let second = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: nil)
            let exchange = try await client.send(
                .post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: second.code))
            #expect(exchange.status == .forbidden)
            #expect(exchange.envelope?.error.code == .userDisabled)
        }
    }

    @Test func enablingLetsTheUserSignInAgainButEndedSessionsStayEnded() async throws {
        try await withServer(.live, configure: Backend.configure) { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, Backend.path(device.userID, "disable"), bearer: Backend.key).status == .ok)
            let enable = try await client.send(.post, Backend.path(device.userID, "enable"), bearer: Backend.key)
            #expect(enable.status == .ok)
            #expect(try Backend.object(enable)["disabled"] as? Bool == false)
            #expect(try await client.refresh(device.refreshToken).status == .unauthorized)
            _ = try await client.registerAgain(device)
        }
    }

    @Test func disablingWritesItsWebhooksInTheSameTransaction() async throws {
        try await withServer(.live, configure: Backend.configure) { client, server in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, Backend.path(device.userID, "disable"), bearer: Backend.key).status == .ok)
            #expect(try await client.send(.post, Backend.path(device.userID, "disable"), bearer: Backend.key).status == .ok)
            #expect(try await client.send(.post, Backend.path(device.userID, "enable"), bearer: Backend.key).status == .ok)
            let events = try await server.services.database.read { sql in
                try await sql.raw("SELECT type, data FROM webhook_events WHERE user_id = \(bind: device.userID) ORDER BY created_at, type").all()
                    .map { (try $0.decode(column: "type", as: String.self), try $0.decode(column: "data", as: String.self)) }
            }
            let mine = events.filter { ["user.disabled", "session.revoked", "user.updated"].contains($0.0) }
            #expect(mine.filter { $0.0 == "user.disabled" }.count == 1)
            let revoked = mine.filter { $0.0 == "session.revoked" }
            #expect(revoked.count == 1)
            #expect(revoked.first?.1.contains(#""reason":"disabled""#) == true)
            #expect(mine.contains { $0.0 == "user.updated" && $0.1.contains(#""change":"enabled""#) })
        }
    }

    @Test func theCLIDisablesAndEnablesAudited() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let disable = try await server.cli("users", "disable", device.userID)
            #expect(disable.exitCode == 0, "\(disable)")
            #expect(disable.stdout.contains("disabled user \(device.userID); revoked 1 session(s)"))
            #expect(try await client.refresh(device.refreshToken).envelope?.error.code == .userDisabled)
            let show = try await server.cli("users", "show", device.userID)
            #expect(show.stdoutLines.contains { $0.hasPrefix("disabled: since ") }, "\(show)")
            let enable = try await server.cli("users", "enable", device.userID)
            #expect(enable.stdout.contains("enabled user \(device.userID)"))
            let actions = try await server.services.audit.events(AuditQuery(text: device.userID)).map(\.action)
            #expect(actions.contains(AuditAction.userDisable) && actions.contains(AuditAction.userEnable))
        }
    }
}
