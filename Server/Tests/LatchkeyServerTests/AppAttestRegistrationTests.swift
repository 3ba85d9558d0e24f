import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttest
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// App Attest on `POST /api/v1/app-attest/challenge` and `POST /api/v1/auth/register-device`, over HTTP with a stand-in
/// Apple CA: attested devices' tokens carry `att`, refusals store nothing, `report` downgrades, `required` gates.
@Suite(.timeLimit(.minutes(2)))
struct AppAttestRegistrationTests {
    @Test func aChallengeIs32RandomBytesInStandardBase64() async throws {
        try await AppAttestBench().withServer(policy: .guests) { client, _ in
            let first = try await client.appAttestChallenge()
            let second = try await client.appAttestChallenge()
            #expect(AppAttestBase64.decode(first)?.count == 32 && first != second)
            #expect(first.count == 44 && first.hasSuffix("="), "standard padded base64")
        }
    }

    @Test func theChallengeRouteIs404WhileAppAttestIsOff() async throws {
        try await withServer(.live) { client, _ in
            let response = try await client.send(.post, "/api/v1/app-attest/challenge")
            #expect(response.status == .notFound && response.text.contains("app-attest.policy"), "\(response.text)")
        }
    }

    @Test func anAttestedDeviceRegistersAndItsTokensCarryAtt() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            let deviceID = UUID().uuidString.lowercased()
            let registered = try await client.registerDevice(deviceID, evidence: try await bench.evidence(client, device))
            #expect(registered.status == .created, "\(registered.text)")
            let tokens = try registered.decode(TokenPairResponse.self)
            #expect(try claims(of: tokens.accessToken).attested == true)

            let profile = try await client.send(.get, "/api/v1/users/me", bearer: tokens.accessToken).decode(UserProfile.self)
            #expect(profile.devices.map(\.attested) == [true])

            // A refreshed token of that session carries it too.
            let refreshed = try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: tokens.refreshToken))
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            #expect(try claims(of: try refreshed.decode(TokenPairResponse.self).accessToken).attested == true)
        }
    }

    @Test func anUnattestedDevicesTokenHasNoAttAndItsDeviceShowsFalse() async throws {
        try await AppAttestBench().withServer(policy: .report) { client, _ in
            let registered = try await client.registerDevice(UUID().uuidString, evidence: nil)
            #expect(registered.status == .created, "\(registered.text)")
            let tokens = try registered.decode(TokenPairResponse.self)
            #expect(try claims(of: tokens.accessToken).attested == nil)
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: tokens.accessToken).decode(UserProfile.self)
            #expect(profile.devices.map(\.attested) == [false])
        }
    }

    @Test(arguments: ["wrong app ID", "counter", "development AAGUID", "expired leaf", "not yet valid leaf", "another key ID"])
    func aFailingAttestationIs400AndStoresNothing(_ fault: String) async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            var parts = TestAttestationAuthority.Parts()
            var evidence: AppAttestEvidence
            switch fault {
            case "wrong app ID": parts.appID = "ZZZZZ99999.com.example.other"
            case "counter": parts.counter = 1
            case "development AAGUID": parts.aaguid = Array("appattestdevelop".utf8)
            case "expired leaf": parts.leafNotAfter = TestAttestationAuthority.now.addingTimeInterval(-1)
            case "not yet valid leaf": parts.leafNotBefore = TestAttestationAuthority.now.addingTimeInterval(60)
            default: break
            }
            evidence = try await bench.evidence(client, device, parts)
            if fault == "another key ID" { evidence.keyID = AppAttestBase64.encode(TestAttestationAuthority.Device().keyID) }
            let deviceID = UUID().uuidString
            let refused = try await client.registerDevice(deviceID, evidence: evidence)
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
            // Nothing was stored: the device registers afresh (201), unattested.
            let fresh = try await client.registerDevice(deviceID, evidence: nil)
            #expect(fresh.status == .created, "\(fresh.text)")
            #expect(try claims(of: try fresh.decode(TokenPairResponse.self).accessToken).attested == nil)
        }
    }

    @Test func aChallengeIsSpentByAnyUse() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            let evidence = try await bench.evidence(client, device)
            #expect(try await client.registerDevice(UUID().uuidString, evidence: evidence).status == .created)
            let reused = try await client.registerDevice(UUID().uuidString, evidence: evidence)
            #expect(reused.status == .badRequest && reused.envelope?.error.code == .invalidChallenge, "\(reused.text)")
            var unknown = try await bench.evidence(client, TestAttestationAuthority.Device())
            unknown.challenge = AppAttestBase64.encode([UInt8](repeating: 1, count: 32))
            let refused = try await client.registerDevice(UUID().uuidString, evidence: unknown)
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidChallenge, "\(refused.text)")
        }
    }

    @Test func aChallengeExpiresAfterFiveMinutes() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, server in
            let evidence = try await bench.evidence(client, TestAttestationAuthority.Device())
            server.clock.advance(by: 301)
            let refused = try await client.registerDevice(UUID().uuidString, evidence: evidence)
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidChallenge, "\(refused.text)")
        }
    }

    @Test func aKeyIDAttestedForAnotherDeviceIsRefused() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            #expect(try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, device)).status == .created)
            let other = UUID().uuidString
            let refused = try await client.registerDevice(other, evidence: try await bench.evidence(client, device))
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
            #expect(try await client.registerDevice(other, evidence: nil).status == .created, "nothing of the refused registration stayed")
        }
    }

    @Test(arguments: [#"{"key_id": "%%%", "attestation_object": "AA==", "challenge": "AA=="}"#, #"{"challenge": "AA=="}"#, #""nope""#])
    func aMalformedAppAttestIs400InvalidRequest(_ appAttest: String) async throws {
        try await AppAttestBench().withServer(policy: .guests) { client, _ in
            let response = try await client.send(
                .post, "/api/v1/auth/register-device", json: #"{"device_id": "\#(UUID().uuidString)", "app_attest": \#(appAttest)}"#)
            #expect(response.status == .badRequest && response.envelope?.error.code == .invalidRequest, "\(response.text)")
        }
    }

    /// Truncated and bit-flipped attestation objects, and assertions: always a 4xx with the envelope, never a 5xx.
    @Test func malformedCBORIsRefusedNeverA5xx() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            let text = try #require(try await bench.evidence(client, device).attestationObject)
            let valid = try #require(AppAttestBase64.decode(text))
            var objects: [[UInt8]] = [[], [0xa0], [0xff], Array(repeating: 0x9f, count: 64)]
            for length in stride(from: 1, to: valid.count, by: max(1, valid.count / 12)) { objects.append(Array(valid.prefix(length))) }
            for index in stride(from: 0, to: valid.count, by: max(1, valid.count / 12)) {
                var flipped = valid
                flipped[index] ^= 0x5a
                objects.append(flipped)
            }
            for object in objects {
                var evidence = try await bench.evidence(client, device)
                evidence.attestationObject = AppAttestBase64.encode(object)
                let response = try await client.registerDevice(UUID().uuidString, evidence: evidence)
                // An empty one is no value at all: invalid_request.
                let code: ErrorCode = object.isEmpty ? .invalidRequest : .invalidAttestation
                #expect(response.status == .badRequest && response.envelope?.error.code == code, "\(object.count) bytes: \(response.text)")
            }
            let deviceID = UUID().uuidString.lowercased()
            #expect(try await client.guest(deviceID, body: try AppAttestGuestTests.body(try await bench.evidence(client, device))).status == .created)
            for assertion in [[], [0xa0], Array(repeating: UInt8(0xbf), count: 40)] as [[UInt8]] {
                let response = try await client.guest(
                    deviceID,
                    headers: [
                        HTTPField.Name(LatchkeyHeader.appAttestAssertion)!: AppAttestBase64.encode(assertion),
                        HTTPField.Name(LatchkeyHeader.appAttestChallenge)!: try await client.appAttestChallenge(),
                    ])
                #expect(response.status == .unauthorized && response.envelope?.error.code == .invalidAssertion, "\(response.text)")
            }
        }
    }

    @Test func reportDowngradesAFailingAttestation() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .report) { client, _ in
            var parts = TestAttestationAuthority.Parts()
            parts.appID = "ZZZZZ99999.com.example.other"
            let evidence = try await bench.evidence(client, TestAttestationAuthority.Device(), parts)
            let registered = try await client.registerDevice(UUID().uuidString, evidence: evidence)
            #expect(registered.status == .created, "\(registered.text)")
            #expect(try claims(of: try registered.decode(TokenPairResponse.self).accessToken).attested == nil)
            let metrics = try await client.send(.get, "/metrics", headers: [.authorization: "Bearer \(TestServer.metricsToken)"])
            #expect(metricValue("latchkey_app_attest_downgrades_total", in: metrics.text) == 1)
        }
    }

    @Test func reportDowngradesAKeyAttestedForAnotherDevice() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .report) { client, _ in
            let device = TestAttestationAuthority.Device()
            #expect(try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, device)).status == .created)
            let other = try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, device))
            #expect(other.status == .created, "\(other.text)")
            #expect(try claims(of: try other.decode(TokenPairResponse.self).accessToken).attested == nil)
        }
    }

    @Test func offIgnoresAppAttestEntirely() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .off) { client, _ in
            let evidence = AppAttestEvidence(keyID: "AA==", attestationObject: "AA==", challenge: "AA==")
            let registered = try await client.registerDevice(UUID().uuidString, evidence: evidence)
            #expect(registered.status == .created, "\(registered.text)")
            #expect(try claims(of: try registered.decode(TokenPairResponse.self).accessToken).attested == nil)
        }
    }

    @Test func requiredRefusesARegistrationWithoutAttestation() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .required) { client, _ in
            let refused = try await client.registerDevice(UUID().uuidString, evidence: nil)
            #expect(refused.status == .forbidden && refused.envelope?.error.code == .attestationRequired, "\(refused.text)")
            let attested = try await client.registerDevice(UUID().uuidString, evidence: try await bench.evidence(client, .init()))
            #expect(attested.status == .created, "\(attested.text)")
        }
    }
}
