import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The claims hook: asked before every session token, signed the Standard Webhooks way; its claims merged but never
/// the reserved ones; a slow, failing or oversized hook omitted by default, or refused (503, nothing changed).
@Suite struct ClaimsHookTests {
    static func withHook<T: Sendable>(
        _ behaviour: ClaimsHookPeer.Behaviour, onFailure: ClaimsConfiguration.FailureMode = .omit,
        _ body: @Sendable (any TestClientProtocol, TestServer, ClaimsHookPeer) async throws -> T
    ) async throws -> T {
        try await ClaimsHookPeer.with(behaviour) { url, peer in
            try await withServer(
                .live,
                configure: {
                    Backend.configure(&$0)
                    $0.claims.hookURL = url
                    $0.claims.hookSecret = ClaimsHookPeer.secret
                    $0.claims.hookTimeout = 0.3
                    $0.claims.onFailure = onFailure
                }
            ) { client, server in try await body(client, server, peer) }
        }
    }

    @Test func theHookAddsAClaimAndIsSignedAndToldNoSecret() async throws {
        try await Self.withHook(.answer(#"{"claims": {"tier": "gold", "limits": {"rpm": 60}}}"#)) { client, _, peer in
            let device = try await client.registerDevice()
            let payload = try Backend.payload(of: device.accessToken)
            #expect(payload["tier"] as? String == "gold")
            #expect((payload["limits"] as? [String: Any])?["rpm"] as? Int == 60)
            let call = try #require(peer.calls.first)
            #expect(ClaimsHookPeer.isSigned(call))
            let sent = try JSONSerialization.jsonObject(with: call.body) as? [String: Any]
            #expect(sent?["user_id"] as? String == device.userID)
            #expect(sent?["token_kind"] as? String == "session")
            #expect(sent?["amr"] as? [String] == ["device"])
            let text = String(decoding: call.body, as: UTF8.self)
            #expect(!text.contains(device.refreshToken) && !text.contains(device.deviceSecret ?? "no secret"))
            // A refresh asks again.
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            #expect(try Backend.payload(of: refreshed.accessToken)["tier"] as? String == "gold")
            #expect(peer.calls.count == 2)
        }
    }

    @Test func aHookTryingToSetReservedClaimsIsIgnored() async throws {
        let answer = #"{"claims": {"sub": "someone-else", "aud": "elsewhere", "kind": "guest", "exp": 9999999999, "role": "editor"}}"#
        try await Self.withHook(.answer(answer)) { client, _, _ in
            let device = try await client.registerDevice()
            let payload = try Backend.payload(of: device.accessToken)
            #expect(payload["sub"] as? String == device.userID)
            #expect(payload["aud"] as? String == "latchkey")
            #expect(payload["kind"] as? String == "session")
            #expect(payload["role"] as? String == "editor")
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).status == .ok)
        }
    }

    @Test func aSlowHookUnderOmitStillIssuesTokens() async throws {
        try await Self.withHook(.silent) { client, _, _ in
            let device = try await client.registerDevice()
            #expect(try Backend.payload(of: device.accessToken)["sub"] as? String == device.userID)
            #expect(try await client.refresh(device.refreshToken).status == .ok)
            let metrics = try await client.send(.get, "/metrics", bearer: TestServer.metricsToken).text
            #expect(metrics.contains(#"latchkey_claims_hook_failures_total{reason="timeout"} 2"#), "\(metrics)")
        }
    }

    @Test func anOversizedAnswerCountsAsAFailedHook() async throws {
        let big = String(repeating: "x", count: 3000)
        try await Self.withHook(.answer(#"{"claims": {"blob": "\#(big)"}}"#)) { client, _, _ in
            let device = try await client.registerDevice()
            #expect(try Backend.payload(of: device.accessToken)["blob"] == nil)
        }
    }

    @Test func underRefuseAFailedHookIs503AndNothingChanges() async throws {
        try await Self.withHook(.status(500), onFailure: .refuse) { client, _, _ in
            let deviceID = UUID()
            let response = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
            #expect(response.status == .serviceUnavailable)
            #expect(response.envelope?.error.code == .serviceUnavailable)
            let shown = try await client.send(.get, Backend.path(deviceID.uuidString.lowercased()), bearer: Backend.key)
            #expect(shown.status == .notFound)
        }
    }

    @Test func underRefuseARefreshTheHookFailsIsRefusedAndTheSameRefreshTokenWorksOnceItAnswers() async throws {
        try await Self.withHook(.answer(#"{"claims": {"tier": "gold"}}"#), onFailure: .refuse) { client, _, peer in
            let device = try await client.registerDevice()
            peer.behave(.status(500))
            let refused = try await client.refresh(device.refreshToken)
            #expect(refused.status == .serviceUnavailable)
            peer.behave(.answer(#"{"claims": {"tier": "silver"}}"#))
            let refreshed = try await client.refresh(device.refreshToken)
            #expect(refreshed.status == .ok)
            #expect(try Backend.payload(of: try refreshed.decode(TokenPairResponse.self).accessToken)["tier"] as? String == "silver")
        }
    }

    @Test func theHookIsToldTheUsersAppMetadata() async throws {
        try await Self.withHook(.answer(#"{"claims": {}}"#)) { client, _, peer in
            let device = try await client.registerDevice()
            let patch = try await client.send(.patch, Backend.path(device.userID), bearer: Backend.key, json: #"{"app_metadata": {"plan": "pro"}}"#)
            #expect(patch.status == .ok)
            _ = try await client.refresh(device.refreshToken)
            let sent = try JSONSerialization.jsonObject(with: try #require(peer.calls.last).body) as? [String: Any]
            #expect((sent?["app_metadata"] as? [String: Any])?["plan"] as? String == "pro")
        }
    }
}
