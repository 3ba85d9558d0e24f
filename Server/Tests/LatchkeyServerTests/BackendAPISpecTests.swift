import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Issue 35, the backend API: `/api/v1/backend/users/{id}` with a service key sent as `Authorization: Bearer`.
@Suite(.timeLimit(.minutes(1)))
struct BackendAPISpecTests {
    static func withBackendServer(
        _ transport: Transport = .router, configure: @escaping (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol, TestServer) async throws -> Void
    ) async throws {
        try await withServer(
            transport,
            configure: {
                BackendCaller.configure(&$0)
                configure(&$0)
            }, body)
    }

    @Test func aWrongOrMissingKeyIs401AndChangesNothing() async throws {
        try await Self.withBackendServer { client, server in
            let device = try await client.registerDevice()
            let calls: [(HTTPRequest.Method, String?, String?)] = [
                (.get, nil, nil), (.patch, nil, #"{"app_metadata": {"plan": "pro"}}"#), (.post, "revoke-sessions", nil), (.post, "disable", nil),
                (.post, "enable", nil), (.post, "refresh-claims", nil), (.delete, nil, nil),
            ]
            for (method, action, json) in calls {
                for key in [nil, "wrong-key", BackendCaller.key + "x", String(BackendCaller.key.dropLast()), device.accessToken] {
                    let answer = try await client.backendCall(method, device.userID, action, key: key, json: json)
                    #expect(answer.status == .unauthorized, "\(method) \(action ?? "") with \(key == nil ? "no key" : "a wrong key"): \(answer.text)")
                    #expect(answer.envelope != nil, "\(answer.text)")
                }
            }
            try await expectAccepted(device.accessToken, by: client)
            #expect(try await client.refresh(device.refreshToken).status == .ok)
            let user = try await client.backendProfile(device.userID)
            #expect(user["disabled"] as? Bool == false)
            #expect((user["app_metadata"] as? [String: Any])?.isEmpty == true, "\(user)")
            #expect(try await server.services.users.user(id: device.userID) != nil)
        }
    }

    @Test func getAnswersTheUserWithIdentitiesDevicesAppMetadataAndTheDisabledFlag() async throws {
        try await Self.withBackendServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let user = try await client.backendProfile(device.userID)
            #expect(Set(user.keys).isSuperset(of: ["user_id", "kind", "identities", "devices", "app_metadata", "disabled"]), "\(user.keys)")
            #expect(user["user_id"] as? String == device.userID)
            #expect(user["kind"] as? String == "device")
            #expect(user["identities"] is [Any], "\(user)")
            let devices = try #require(user["devices"] as? [[String: Any]], "\(user)")
            #expect(devices.compactMap { $0["device_id"] as? String } == [device.userID], "\(devices)")
            #expect(user["app_metadata"] is [String: Any], "\(user)")
            #expect(user["disabled"] as? Bool == false)
            let text = try await client.backendCall(.get, device.userID).text
            #expect(!text.contains(try #require(device.deviceSecret)) && !text.contains(device.refreshToken))
        }
    }

    @Test func anUnknownOrDeletedUserIs404NotFound() async throws {
        try await Self.withBackendServer { client, _ in
            for method in [HTTPRequest.Method.get, .delete] {
                let unknown = try await client.backendCall(method, UUID().uuidString.lowercased())
                #expect(unknown.status == .notFound && unknown.envelope?.error.code == .notFound, "\(method): \(unknown.text)")
            }
            let unknown = try await client.backendCall(.post, UUID().uuidString.lowercased(), "disable")
            #expect(unknown.status == .notFound && unknown.envelope?.error.code == .notFound, "\(unknown.text)")

            let device = try await client.registerDevice()
            let deleted = try await client.backendCall(.delete, device.userID)
            #expect(deleted.status.code >= 200 && deleted.status.code < 300, "\(deleted.text)")
            let gone = try await client.backendCall(.get, device.userID)
            #expect(gone.status == .notFound && gone.envelope?.error.code == .notFound, "\(gone.text)")
            try await expectRefused(device.accessToken, by: client)
            #expect(try await client.refresh(device.refreshToken).status == .unauthorized)
        }
    }

    @Test func appMetadataAppearsInTheNextAccessTokenAfterARefresh() async throws {
        try await Self.withBackendServer { client, _ in
            let device = try await client.registerDevice()
            #expect(
                try allClaims(of: device.accessToken)["app_metadata"] == nil
                    || (try allClaims(of: device.accessToken)["app_metadata"] as? [String: Any])?.isEmpty == true)
            let patched = try await client.backendCall(.patch, device.userID, json: #"{"app_metadata": {"plan": "pro", "seats": 3}}"#)
            #expect(patched.status == .ok, "\(patched.text)")
            let user = try await client.backendProfile(device.userID)
            let stored = try #require(user["app_metadata"] as? [String: Any])
            #expect(stored["plan"] as? String == "pro" && stored["seats"] as? Int == 3, "\(stored)")

            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let claim = try #require(try allClaims(of: refreshed.accessToken)["app_metadata"] as? [String: Any])
            #expect(claim["plan"] as? String == "pro" && claim["seats"] as? Int == 3, "\(claim)")
            // A new sign-in carries it too.
            let again = try await client.registerAgain(device)
            #expect((try allClaims(of: again.accessToken)["app_metadata"] as? [String: Any])?["plan"] as? String == "pro")
        }
    }

    @Test func anOversizedOrNonObjectAppMetadataIs400AndNothingIsStored() async throws {
        try await Self.withBackendServer(configure: { $0.claims.maxBytes = 256 }) { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.backendCall(.patch, device.userID, json: #"{"app_metadata": {"plan": "basic"}}"#).status == .ok)
            let big = String(repeating: "x", count: 300)
            let bodies = [
                #"{"app_metadata": {"notes": "\#(big)"}}"#, #"{"app_metadata": ["plan", "pro"]}"#, #"{"app_metadata": "pro"}"#,
                #"{"app_metadata": 3}"#, #"{"app_metadata": null}"#, #"{}"#, "not json",
            ]
            for body in bodies {
                let answer = try await client.backendCall(.patch, device.userID, json: body)
                #expect(answer.status == .badRequest && answer.envelope?.error.code == .invalidRequest, "\(body.prefix(40)): \(answer.text)")
            }
            let stored = try #require(try await client.backendProfile(device.userID)["app_metadata"] as? [String: Any])
            #expect(stored.count == 1 && stored["plan"] as? String == "basic", "\(stored)")
        }
    }

    @Test func revokeSessionsEndsEverySessionOfTheUserOnly() async throws {
        try await Self.withBackendServer { client, _ in
            let device = try await client.registerDevice()
            let second = try await client.registerAgain(device)
            let stranger = try await client.registerDevice()
            let answer = try await client.backendCall(.post, device.userID, "revoke-sessions")
            #expect(answer.status.code >= 200 && answer.status.code < 300, "\(answer.text)")
            try await expectRefused(device.accessToken, by: client)
            try await expectRefused(second.accessToken, by: client)
            #expect(try await client.refresh(second.refreshToken).status == .unauthorized)
            try await expectAccepted(stranger.accessToken, by: client)
            // Not disabled: the device signs in again.
            _ = try await client.registerAgain(device)
        }
    }

    /// Disable: every session ends (the socket hears `session.revoked` reason `disabled`; the webhook tells
    /// `user.disabled`), every sign-in and refresh is 403 `user_disabled` — a refresh token of a session disabling
    /// revoked too, not 401 — until enabled.
    @Test func disablingRefusesSignInAndRefreshWith403UntilEnabled() async throws {
        try await withWebhookServer(configure: { BackendCaller.configure(&$0) }) { client, _, receiver in
            let device = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: device.accessToken)
            #expect(try await socket.next().type == "connected")

            let disabled = try await client.backendCall(.post, device.userID, "disable")
            #expect(disabled.status.code >= 200 && disabled.status.code < 300, "\(disabled.text)")
            let frame = try await socket.next()
            #expect(frame.type == "session.revoked" && frame.reason == "disabled", "\(frame)")
            #expect(try await socket.closeCode() == 4001)
            #expect(try await client.backendProfile(device.userID)["disabled"] as? Bool == true)
            try await expectRefused(device.accessToken, by: client)

            let refresh = try await client.refresh(device.refreshToken)
            #expect(refresh.status == .forbidden && refresh.envelope?.error.code == .userDisabled, "\(refresh.text)")
            let signIn = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            #expect(signIn.status == .forbidden && signIn.envelope?.error.code == .userDisabled, "\(signIn.text)")

            try await receiver.waitFor("user.disabled", data: ["user_id": device.userID])
            try await receiver.waitFor("session.revoked", data: ["user_id": device.userID, "session_id": device.sessionID, "reason": "disabled"])

            let enabled = try await client.backendCall(.post, device.userID, "enable")
            #expect(enabled.status.code >= 200 && enabled.status.code < 300, "\(enabled.text)")
            #expect(try await client.backendProfile(device.userID)["disabled"] as? Bool == false)
            let back = try await client.registerAgain(device)
            try await expectAccepted(back.accessToken, by: client)
            #expect(try await client.refresh(back.refreshToken).status == .ok)
            try await receiver.waitFor("user.updated", data: ["user_id": device.userID, "change": "enabled"])
        }
    }

    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
    func aDisabledUserCannotLogInWithAPassword() async throws {
        let peer = try await SMTPPeer.shared()
        let password = "correct horse battery staple"
        let server = try await TestServer.make {
            $0.useMailPeer(peer)
            BackendCaller.configure(&$0)
        }
        try await server.test(.live) { client in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, password, peer: peer)
            #expect(try await client.backendCall(.post, session.userID, "disable").status.code < 300)
            let login = try await client.login(email, password)
            #expect(login.status == .forbidden && login.envelope?.error.code == .userDisabled, "\(login.text)")
            #expect(try await client.backendCall(.post, session.userID, "enable").status.code < 300)
            #expect(try await client.login(email, password).status == .ok)
        }
    }

    /// `backend.service-keys`: every listed key works (rotation), and each call is audited with the key's name, never
    /// the key.
    @Test func rotatedKeysBothWorkAndEachCallIsAuditedWithTheKeysName() async throws {
        let old = "old-backend-key-0123456789abcdef0123"
        let new = "new-backend-key-fedcba9876543210fedc"
        try await withServer(
            .router,
            configure: {
                $0.backendServiceKeys = [ServiceKeyEntry(name: "2026-q3", key: old), ServiceKeyEntry(name: "2026-q4", key: new)]
            }
        ) { client, server in
            let device = try await client.registerDevice()
            #expect(try await client.backendCall(.get, device.userID, key: old).status == .ok)
            #expect(try await client.backendCall(.patch, device.userID, key: new, json: #"{"app_metadata": {"tier": 2}}"#).status == .ok)
            #expect(try await client.backendCall(.post, device.userID, "disable", key: old).status.code < 300)
            #expect(try await client.backendCall(.get, device.userID, key: BackendCaller.key).status == .unauthorized)
            let lines = try await server.auditRowLines()
            #expect(lines.contains { $0.contains("2026-q4") && $0.contains(device.userID) }, "\(lines)")
            #expect(lines.contains { $0.contains("2026-q3") && $0.contains(device.userID) }, "\(lines)")
            #expect(!lines.contains { $0.contains(old) || $0.contains(new) }, "\(lines)")
        }
    }

    @Test func theSingleServiceKeyIsAuditedAsBackend() async throws {
        try await Self.withBackendServer { client, server in
            let device = try await client.registerDevice()
            #expect(try await client.backendCall(.post, device.userID, "revoke-sessions").status.code < 300)
            let lines = try await server.auditRowLines()
            #expect(lines.contains { $0.contains("backend") && $0.contains(device.userID) }, "\(lines)")
            #expect(!lines.contains { $0.contains(BackendCaller.key) }, "\(lines)")
        }
    }
}
