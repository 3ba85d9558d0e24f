import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import NIOCore
import Testing

/// Issue 34, step 1: `POST /api/v1/app-attest/challenge` (no auth) → `{challenge}`: 32 random bytes, standard padded
/// base64, single use, 5 minutes on the server's clock; limited per client IP by `limits.app-attest-challenge`.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestSpecChallengeTests {
    typealias Spec = AppAttestSpec

    @Test func aChallengeIs32RandomBytesInStandardPaddedBase64WithoutAuth() async throws {
        try await Spec.with { spec in
            let response = try await spec.requestChallenge()
            #expect(response.status == .ok, "\(response.text)")
            let first = try response.decode(AppAttestChallengeResponse.self).challenge
            #expect(first.count == 44 && first.hasSuffix("="), "\(first) is not 32 bytes in standard padded base64")
            #expect(try Spec.bytes(ofChallenge: first).count == 32)
            #expect(!first.contains("-") && !first.contains("_"))
            var seen: Set<String> = [first]
            for _ in 0..<5 { seen.insert(try await spec.challenge()) }
            #expect(seen.count == 6, "challenges repeat")
        }
    }

    @Test func aChallengeIsSingleUse() async throws {
        try await Spec.with { spec in
            let challenge = try await spec.challenge()
            let first = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: challenge))
            #expect(first.status == .created, "\(first.text)")
            let rows = try await spec.rows()
            let again = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: challenge))
            #expect(again.status == .badRequest)
            #expect(again.envelope?.error.code == .invalidChallenge, "\(again.text)")
            #expect(try await spec.rows() == rows)
        }
    }

    /// Two attestations over one challenge sent at once: the challenge is taken atomically, so exactly one goes through.
    @Test func twoRacingAttestationsOverOneChallengeOneWins() async throws {
        try await Spec.with { spec in
            let challenge = try await spec.challenge()
            var bodies: [String] = []
            for _ in 0..<2 {
                let evidence = try await spec.evidence(Spec.Device(), challenge: challenge)
                let request = RegisterDeviceRequest(deviceID: UUID().uuidString, appAttest: evidence)
                bodies.append(String(decoding: try JSONEncoder().encode(request), as: UTF8.self))
            }
            let answers = try await racing(2, port: try #require(spec.client.port)) { [bodies] index in
                .init(
                    "/api/v1/auth/register-device", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: bodies[index]))
            }
            #expect(answers.filter { $0.status == .created }.count == 1, "\(answers)")
            #expect(answers.filter { $0 == RacedAnswer(status: .badRequest, code: .invalidChallenge) }.count == 1, "\(answers)")
            #expect(try await spec.count("app_attest_keys") == 1)
        }
    }

    /// "Any use spends a challenge": an attestation refused for another reason spends it too.
    @Test func aRefusedAttestationSpendsItsChallenge() async throws {
        try await Spec.with { spec in
            let challenge = try await spec.challenge()
            var parts = TestAttestationAuthority.Parts()
            parts.appID = "ZZZZZ99999.com.example.unknown"
            let refused = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), parts, challenge: challenge))
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
            let retried = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: challenge))
            #expect(retried.envelope?.error.code == .invalidChallenge, "\(retried.text)")
        }
    }

    @Test func aChallengeLastsFiveMinutesOnTheServersClock() async throws {
        try await Spec.with { spec in
            let inTime = try await spec.challenge()
            spec.server.clock.advance(by: 290)
            #expect(try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: inTime)).status == .created)
            let late = try await spec.challenge()
            spec.server.clock.advance(by: 301)
            let refused = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: late))
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .invalidChallenge, "\(refused.text)")
        }
    }

    @Test func aChallengeTheServerNeverIssuedIsRefused() async throws {
        try await Spec.with { spec in
            let madeUp = Spec.base64((0..<32).map { _ in UInt8.random(in: 0...255) })
            let response = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), challenge: madeUp))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidChallenge, "\(response.text)")
            #expect(try await spec.rows()["app_attest_keys"] == 0)
        }
    }

    /// `limits.app-attest-challenge` counts per client IP (`limits.trusted-proxies` resolves it), never globally.
    @Test func challengesAreLimitedPerClientIP() async throws {
        let settings: [String: any Sendable] = ["limits.app-attest-challenge.limit": 3, "limits.app-attest-challenge.window": 600]
        try await Spec.with(settings) { spec in
            for _ in 0..<3 { #expect(try await spec.requestChallenge(from: "203.0.113.7").status == .ok) }
            let over = try await spec.requestChallenge(from: "203.0.113.7")
            #expect(over.status == .tooManyRequests)
            #expect(over.envelope?.error.code == .rateLimited)
            #expect(try await spec.requestChallenge(from: "203.0.113.8").status == .ok, "one address's limit held back another's")
            spec.server.clock.advance(by: 601)
            #expect(try await spec.requestChallenge(from: "203.0.113.7").status == .ok)
        }
    }

    @Test func aChallengeLimitOfZeroIsOff() async throws {
        try await Spec.with(["limits.app-attest-challenge.limit": 0]) { spec async throws in
            for _ in 0..<40 { #expect(try await spec.requestChallenge(from: "203.0.113.9").status == .ok) }
        }
    }

    /// With policy off and no app IDs App Attest is not configured: the route answers 404 (contract).
    @Test func theChallengeRouteIs404WhenAppAttestIsNotConfigured() async throws {
        var settings = Spec.baseSettings
        settings["app-attest.app-ids"] = nil
        let configuration = try await Spec.configuration(settings)
        let server = try await TestServer.make(clock: ManualClock(start: TestAttestationAuthority.now)) { Spec.adopt(configuration, into: &$0) }
        try await server.test(.live) { client in
            let response = try await client.send(.post, "/api/v1/app-attest/challenge")
            #expect(response.status == .notFound, "\(response.text)")
            #expect(response.envelope != nil)
        }
    }
}
