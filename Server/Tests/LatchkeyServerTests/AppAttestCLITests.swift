import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// `latchkey app-attest debug-token create|list|revoke` and `latchkey devices show`, as support runs them; and the
/// limits of App Attest, per key ID and per client, never global.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestCLITests {
    @Test func debugTokensAreMintedOnceListedWithoutSecretsAndRevoked() async throws {
        try await AppAttestBench().withServer(policy: .guests, configure: { $0.appAttest.allowDebugTokens = true }) { client, server in
            let created = try await server.cli("app-attest", "debug-token", "create", "--name", "CI runner")
            #expect(created.exitCode == 0, "\(created)")
            let token = try #require(created.stdoutLines.first)
            let body = String(decoding: try JSONEncoder().encode(GuestSessionRequest(appAttest: .init(debugToken: token))), as: UTF8.self)
            #expect(try await client.guest(UUID().uuidString, body: body).status == .created)

            let listed = try await server.cli("app-attest", "debug-token", "list")
            #expect(listed.exitCode == 0 && !listed.stdout.contains(token), "\(listed)")
            let row = try #require(listed.tableRows.first)
            #expect(row[1] == "CI runner" && row[3] != "-" && row[4] == "-", "\(listed)")

            let revoked = try await server.cli("app-attest", "debug-token", "revoke", row[0])
            #expect(revoked.exitCode == 0, "\(revoked)")
            #expect(try await client.guest(UUID().uuidString, body: body).status == .badRequest)
            #expect(try await server.cli("app-attest", "debug-token", "revoke", row[0]).exitCode == 3)
        }
    }

    @Test func devicesShowSaysWhetherTheDeviceIsAttested() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, server in
            let attested = UUID().uuidString.lowercased()
            #expect(try await client.registerDevice(attested, evidence: try await bench.evidence(client, .init())).status == .created)
            let plain = UUID().uuidString.lowercased()
            #expect(try await client.registerDevice(plain, evidence: nil).status == .created)

            let shown = try await server.cli("devices", "show", attested)
            #expect(shown.exitCode == 0 && shown.stdoutLines.contains { $0.hasPrefix("attested: yes (attestation") }, "\(shown)")
            let other = try await server.cli("devices", "show", plain)
            #expect(other.exitCode == 0 && other.stdoutLines.contains("attested: no"), "\(other)")
        }
    }

    @Test func attestationsAreLimitedPerKeyIDAcrossClients() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(
            policy: .guests,
            configure: {
                $0.appAttest.limit.limit = 2
                $0.limits.trustedProxies = ["127.0.0.1"]
            }
        ) { client, _ in
            let device = TestAttestationAuthority.Device()
            var statuses: [HTTPResponse.Status] = []
            for address in ["203.0.113.1", "203.0.113.2", "203.0.113.3"] {
                let body = String(
                    decoding: try JSONEncoder().encode(
                        RegisterDeviceRequest(deviceID: UUID().uuidString, appAttest: try await bench.evidence(client, device))),
                    as: UTF8.self)
                let response = try await client.send(
                    .post, "/api/v1/auth/register-device", json: body, headers: [HTTPField.Name("X-Forwarded-For")!: address])
                statuses.append(response.status)
            }
            // The first attests, the second is refused (the key is the first device's), the third is over the key's limit.
            #expect(statuses == [.created, .badRequest, .tooManyRequests])
            // Another key from one of those addresses is not limited by it.
            let other = try await client.send(
                .post, "/api/v1/auth/register-device",
                json: String(
                    decoding: try JSONEncoder().encode(
                        RegisterDeviceRequest(deviceID: UUID().uuidString, appAttest: try await bench.evidence(client, .init()))),
                    as: UTF8.self),
                headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.4"])
            #expect(other.status == .created, "\(other.text)")
        }
    }

    @Test func attestationsAreLimitedPerClientAndChallengesToo() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(
            policy: .guests,
            configure: {
                $0.appAttest.limit.limit = 2
                $0.appAttest.challengeLimit.limit = 4
            }
        ) { client, _ in
            for _ in 0..<2 {
                #expect(try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, .init())).status == .created)
            }
            let limited = try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, .init()))
            #expect(limited.status == .tooManyRequests, "\(limited.text)")
            #expect(try await client.send(.post, "/api/v1/app-attest/challenge").status == .ok)
            #expect(try await client.send(.post, "/api/v1/app-attest/challenge").status == .tooManyRequests)
        }
    }
}
