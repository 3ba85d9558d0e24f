import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Issue 35, claims in tokens: the claims hook (`hooks.claims.*`), signed the Standard Webhooks way, merged into each
/// access token without reserved claims, capped at `claims.max-bytes`, its failure handled by `on-failure`; and
/// `claims.changed` on the user's event sockets.
@Suite(.timeLimit(.minutes(1)))
struct ClaimsHookSpecTests {
    /// Runs `body` against a live server whose claims hook is `hook` (answering `{"claims": {"tier": "gold"}}` unless
    /// told otherwise).
    static func withHook(
        _ hook: WebhookPeer = WebhookPeer(), configure: @escaping @Sendable (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, TestServer, WebhookPeer) async throws -> Void
    ) async throws {
        try await hook.listening { url in
            let server = try await TestServer.make { configuration in
                configuration.claims.hookURL = url + "/claims"
                configuration.claims.hookSecret = hook.secret
                configuration.claims.hookTimeout = 2
                BackendCaller.configure(&configuration)
                configure(&configuration)
            }
            try await server.test(.live) { client in try await body(client, server, hook) }
        }
    }

    static let reserved = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "sid", "kind", "did", "att", "aal", "amr", "cnf"]

    @Test func theHookIsCalledSignedWithTheUserAndItsClaimsAreMerged() async throws {
        let hook = WebhookPeer()
        hook.answerAlways(.json(#"{"claims": {"tier": "gold", "org": {"id": 7}}}"#))
        try await Self.withHook(hook) { client, _, hook in
            let device = try await client.registerDevice()
            let call = try #require(hook.deliveries.last)
            #expect(call.verified, "the hook request's signature did not verify: \(call.signature)")
            #expect(!call.id.isEmpty && !call.timestamp.isEmpty)
            let body = call.json
            #expect(body["user_id"] as? String == device.userID, "\(call.text)")
            #expect(body["kind"] as? String == "device", "\(call.text)")
            #expect(body["token_kind"] is String, "\(call.text)")
            #expect(body["identities"] is [Any], "\(call.text)")
            // Never set: an empty object, as the backend API shows it; once set, the object itself (below).
            #expect((body["app_metadata"] as? [String: Any])?.isEmpty == true, "\(call.text)")
            #expect(body["amr"] is [Any], "\(call.text)")
            #expect(!call.text.contains(try #require(device.deviceSecret)))
            let claims = try allClaims(of: device.accessToken)
            #expect(claims["tier"] as? String == "gold", "\(claims)")
            #expect((claims["org"] as? [String: Any])?["id"] as? Int == 7, "\(claims)")
            #expect(claims["sub"] as? String == device.userID)

            #expect(try await client.backendCall(.patch, device.userID, json: #"{"app_metadata": {"plan": "pro"}}"#).status == .ok)
            let refreshed = try await client.refresh(device.refreshToken)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let latest = try #require(hook.deliveries.last)
            #expect(latest.verified)
            #expect((latest.json["app_metadata"] as? [String: Any])?["plan"] as? String == "pro", "\(latest.text)")
        }
    }

    @Test func reservedClaimsInTheAnswerAreDroppedAndTheRestMerged() async throws {
        let hook = WebhookPeer()
        let forged = Self.reserved.map { #""\#($0)": "forged""# }.joined(separator: ", ")
        hook.answerAlways(.json(#"{"claims": {\#(forged), "plan": "pro"}}"#))
        try await Self.withHook(hook) { client, _, _ in
            let device = try await client.registerDevice()
            let claims = try allClaims(of: device.accessToken)
            #expect(claims["plan"] as? String == "pro", "\(claims)")
            for name in Self.reserved { #expect(claims[name] as? String != "forged", "\(name) was set by the hook: \(claims)") }
            #expect(claims["sub"] as? String == device.userID && claims["iss"] as? String == TestServer.issuer)
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    @Test func aRefreshCallsTheHookAgain() async throws {
        let hook = WebhookPeer()
        hook.answer([.json(#"{"claims": {"tier": "silver"}}"#)], otherwise: .json(#"{"claims": {"tier": "gold"}}"#))
        try await Self.withHook(hook) { client, _, hook in
            let device = try await client.registerDevice()
            #expect(try allClaims(of: device.accessToken)["tier"] as? String == "silver")
            let calls = hook.deliveries.count
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            #expect(hook.deliveries.count == calls + 1)
            #expect(hook.deliveries.last?.json["user_id"] as? String == device.userID)
            #expect(try allClaims(of: refreshed.accessToken)["tier"] as? String == "gold")
        }
    }

    /// An answer over `claims.max-bytes` is a failed hook: with `omit` the token comes without the hook's claims.
    @Test func anOversizedAnswerWithOmitIssuesTheTokenWithoutTheHooksClaims() async throws {
        let hook = WebhookPeer()
        hook.answerAlways(.json(#"{"claims": {"tier": "gold", "blob": "\#(String(repeating: "x", count: 400))"}}"#))
        try await Self.withHook(hook, configure: { $0.claims.maxBytes = 256 }) { client, _, _ in
            let device = try await client.registerDevice()
            let claims = try allClaims(of: device.accessToken)
            #expect(claims["tier"] == nil && claims["blob"] == nil, "\(claims.keys)")
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    /// With `refuse`, a failed hook (oversized, 500) answers 503 and nothing changes: no user, no session.
    @Test(arguments: [
        WebhookPeer.Answer.json(#"{"claims": {"blob": "\#(String(repeating: "x", count: 400))"}}"#), .status(500), .json("not json"),
    ])
    func aFailedHookWithRefuseIs503AndStartsNoSession(answer: WebhookPeer.Answer) async throws {
        let hook = WebhookPeer()
        hook.answerAlways(answer)
        try await Self.withHook(
            hook,
            configure: {
                $0.claims.maxBytes = 256
                $0.claims.onFailure = .refuse
            }
        ) { client, server, hook in
            let refused = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            #expect(refused.status == .serviceUnavailable, "\(refused.text)")
            #expect(hook.deliveries.count >= 1, "the hook was asked")
            #expect(try await AtomicSignInTests.count("sessions", on: server) == 0)
            #expect(try await AtomicSignInTests.count("users", on: server) == 0)
        }
    }

    @Test func aHookThatNeverAnswersWithOmitStillIssuesTokensWithinTheTimeout() async throws {
        let hook = WebhookPeer()
        hook.answerAlways(.hang)
        try await Self.withHook(hook, configure: { $0.claims.hookTimeout = 0.3 }) { client, _, _ in
            let started = ContinuousClock.now
            let device = try await client.registerDevice()
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(try allClaims(of: device.accessToken)["tier"] == nil)
            let refreshed = try await client.refresh(device.refreshToken)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
        }
    }

    @Test func theSocketHearsClaimsChangedAfterAnAppMetadataChangeAndAfterRefreshClaims() async throws {
        try await withServer(.live, configure: BackendCaller.configure) { client, _ in
            let device = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: device.accessToken)
            #expect(try await socket.next().type == "connected")
            #expect(try await client.backendCall(.patch, device.userID, json: #"{"app_metadata": {"plan": "pro"}}"#).status == .ok)
            #expect(try await socket.next().type == "claims.changed")
            let triggered = try await client.backendCall(.post, device.userID, "refresh-claims")
            #expect(triggered.status.code >= 200 && triggered.status.code < 300, "\(triggered.text)")
            #expect(try await socket.next().type == "claims.changed")
            let unknown = try await client.backendCall(.post, UUID().uuidString.lowercased(), "refresh-claims")
            #expect(unknown.status == .notFound, "\(unknown.text)")
        }
    }
}
