import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttest
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// App Attest on `POST /api/v1/auth/guest`: the policies, attested devices' assertions, the unattested budget tier,
/// forward auth's `X-Latchkey-Attested`, and debug tokens.
@Suite(.timeLimit(.minutes(2)))
struct AppAttestGuestTests {
    static let rules = [AuthorizationRule(method: "POST", pathPrefix: "/api/edit", auth: .bearer, meter: "actions")]

    static func forwardAuth(_ configuration: inout LatchkeyConfiguration) {
        configuration.authorizationRules = Self.rules
        configuration.limits.trustedProxies = ["127.0.0.1"]
        configuration.meters = ["actions": Meter(name: "actions", guestLimit: 5, userLimit: 0)]
    }

    static func edit(_ client: some TestClientProtocol, bearer: String, device: String) async throws -> TestResponse {
        try await client.send(
            .get, "/api/v1/authorize", bearer: bearer,
            headers: [
                HTTPField.Name("X-Original-Method")!: "POST", HTTPField.Name("X-Original-URI")!: "/api/edit",
                HTTPField.Name("X-Device-ID")!: device,
            ])
    }

    static func body(_ evidence: AppAttestEvidence) throws -> String {
        String(decoding: try JSONEncoder().encode(GuestSessionRequest(appAttest: evidence)), as: UTF8.self)
    }

    @Test func guestsRefusesAnUnattestedFreshUUIDAndServesAnAttestedDeviceWithItsMeter() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests, configure: Self.forwardAuth) { client, _ in
            let stranger = try await client.guest(UUID().uuidString)
            #expect(stranger.status == .forbidden && stranger.envelope?.error.code == .attestationRequired, "\(stranger.text)")

            let device = TestAttestationAuthority.Device()
            let deviceID = UUID().uuidString.lowercased()
            let attested = try await client.guest(deviceID, body: try Self.body(try await bench.evidence(client, device)))
            #expect(attested.status == .created, "\(attested.text)")
            let token = try attested.decode(GuestSessionResponse.self).accessToken
            #expect(try claims(of: token).attested == true)

            // Its meter: 5 admitted, the 6th refused; forward auth says it is attested.
            for _ in 0..<5 {
                let passed = try await Self.edit(client, bearer: token, device: deviceID)
                #expect(passed.status == .ok && passed.headers[HTTPField.Name("X-Latchkey-Attested")!] == "true", "\(passed.text)")
            }
            #expect(try await Self.edit(client, bearer: token, device: deviceID).status == .tooManyRequests)
        }
    }

    @Test func anAttestedDeviceNeedsAnAssertionWithAGrowingCounter() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, _ in
            let device = TestAttestationAuthority.Device()
            let deviceID = UUID().uuidString.lowercased()
            #expect(try await client.guest(deviceID, body: try Self.body(try await bench.evidence(client, device))).status == .created)

            let bare = try await client.guest(deviceID)
            #expect(bare.status == .unauthorized && bare.envelope?.error.code == .invalidAssertion, "\(bare.text)")

            let proved = try await client.guest(deviceID, assertingWith: device, counter: 1)
            #expect(proved.status == .created, "\(proved.text)")
            #expect(try claims(of: try proved.decode(GuestSessionResponse.self).accessToken).attested == true)

            let stale = try await client.guest(deviceID, assertingWith: device, counter: 1)
            #expect(stale.status == .unauthorized && stale.envelope?.error.code == .invalidAssertion, "\(stale.text)")
            let otherKey = try await client.guest(deviceID, assertingWith: device, counter: 5, signer: .init())
            #expect(otherKey.status == .unauthorized && otherKey.envelope?.error.code == .invalidAssertion, "\(otherKey.text)")
            #expect(try await client.guest(deviceID, assertingWith: device, counter: 2).status == .created)
        }
    }

    @Test func anAssertionOverAnotherBodyIsRefused() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .report) { client, _ in
            let device = TestAttestationAuthority.Device()
            let deviceID = UUID().uuidString.lowercased()
            #expect(try await client.guest(deviceID, body: try Self.body(try await bench.evidence(client, device))).status == .created)
            let challenge = try await client.appAttestChallenge()
            let signedBody = Array("{}".utf8)
            let clientDataHash = AppAttestVerifier.assertionClientDataHash(
                method: "POST", path: "/api/v1/auth/guest", body: signedBody, challenge: AppAttestBase64.decode(challenge) ?? [])
            let assertion = try TestAttestationAuthority.assertion(device, clientDataHash: clientDataHash, counter: 1)
            let headers: HTTPFields = [
                HTTPField.Name(LatchkeyHeader.appAttestAssertion)!: AppAttestBase64.encode(assertion),
                HTTPField.Name(LatchkeyHeader.appAttestChallenge)!: challenge,
            ]
            let refused = try await client.guest(deviceID, body: #"{ }"#, headers: headers)
            #expect(refused.status == .unauthorized && refused.envelope?.error.code == .invalidAssertion, "\(refused.text)")
        }
    }

    @Test func theUnattestedGuestLimitMetersUnattestedDevicesUnderGuests() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(
            policy: .guests,
            configure: {
                Self.forwardAuth(&$0)
                $0.appAttest.unattestedGuestLimit = 1
            }
        ) { client, _ in
            let deviceID = UUID().uuidString.lowercased()
            let unattested = try await client.guest(deviceID)
            #expect(unattested.status == .created, "\(unattested.text)")
            let token = try unattested.decode(GuestSessionResponse.self).accessToken
            #expect(try claims(of: token).attested == nil)
            let first = try await Self.edit(client, bearer: token, device: deviceID)
            #expect(first.status == .ok && first.headers[HTTPField.Name("X-Latchkey-Attested")!] == nil)
            #expect(try await Self.edit(client, bearer: token, device: deviceID).status == .tooManyRequests)
        }
    }

    @Test func debugTokensAreRefusedUnlessAllowed() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests) { client, server in
            let (_, token) = try await server.services.appAttest.createDebugToken(name: "CI")
            let refused = try await client.guest(UUID().uuidString, body: try Self.body(AppAttestEvidence(debugToken: token)))
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
        }
    }

    @Test func anAllowedDebugTokenAttestsAGuestEveryUseAuditedAndRevokingEndsIt() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests, configure: { $0.appAttest.allowDebugTokens = true }) { client, server in
            let (id, token) = try await server.services.appAttest.createDebugToken(name: "simulator")
            let deviceID = UUID().uuidString.lowercased()
            let body = try Self.body(AppAttestEvidence(debugToken: token))
            let first = try await client.guest(deviceID, body: body)
            #expect(first.status == .created, "\(first.text)")
            #expect(try claims(of: try first.decode(GuestSessionResponse.self).accessToken).attested == true)
            #expect(try await client.guest(deviceID).status == .unauthorized, "a debug token's device sends it each time")
            #expect(try await client.guest(deviceID, body: body).status == .created)

            let events = try await server.services.audit.events(AuditQuery(action: AuditAction.appAttestDebugTokenUse))
            #expect(events.count == 2 && events.allSatisfy { $0.details?.contains(id) == true && $0.details?.contains(token) == false })

            try await server.services.appAttest.revokeDebugToken(id: id)
            let revoked = try await client.guest(deviceID, body: body)
            #expect(revoked.status == .badRequest && revoked.envelope?.error.code == .invalidAttestation, "\(revoked.text)")
            let unknown = try await client.guest(UUID().uuidString, body: try Self.body(AppAttestEvidence(debugToken: "aadt_unknown")))
            #expect(unknown.status == .badRequest && unknown.envelope?.error.code == .invalidAttestation)
        }
    }

    @Test func requiredRefusesUnattestedGuestsEvenWithAnUnattestedGuestLimit() async throws {
        try await AppAttestBench().withServer(policy: .required, configure: { $0.appAttest.unattestedGuestLimit = 3 }) { client, _ in
            let response = try await client.guest(UUID().uuidString)
            #expect(response.status == .forbidden && response.envelope?.error.code == .attestationRequired, "\(response.text)")
        }
    }

    @Test func reportMetersUnattestedGuestsAtTheUnattestedGuestLimit() async throws {
        try await AppAttestBench().withServer(
            policy: .report,
            configure: {
                Self.forwardAuth(&$0)
                $0.appAttest.unattestedGuestLimit = 2
            }
        ) { client, _ in
            let deviceID = UUID().uuidString.lowercased()
            let token = try await client.guest(deviceID).decode(GuestSessionResponse.self).accessToken
            #expect(try await Self.edit(client, bearer: token, device: deviceID).status == .ok)
            #expect(try await Self.edit(client, bearer: token, device: deviceID).status == .ok)
            #expect(try await Self.edit(client, bearer: token, device: deviceID).status == .tooManyRequests)
        }
    }

    @Test func reportIssuesGuestTokensToUnattestedDevices() async throws {
        try await AppAttestBench().withServer(policy: .report) { client, _ in
            let response = try await client.guest(UUID().uuidString)
            #expect(response.status == .created, "\(response.text)")
            #expect(try claims(of: try response.decode(GuestSessionResponse.self).accessToken).attested == nil)
        }
    }

    @Test func guestsRefusesAFailingAttestationInsteadOfDowngrading() async throws {
        let bench = try AppAttestBench()
        try await bench.withServer(policy: .guests, configure: { $0.appAttest.unattestedGuestLimit = 1 }) { client, _ in
            var parts = TestAttestationAuthority.Parts()
            parts.counter = 3
            let evidence = try await bench.evidence(client, TestAttestationAuthority.Device(), parts)
            let refused = try await client.guest(UUID().uuidString, body: try Self.body(evidence))
            #expect(refused.status == .badRequest && refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
        }
    }
}
