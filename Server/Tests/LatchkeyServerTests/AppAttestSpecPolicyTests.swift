import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34, "Policy": `app-attest.policy` off (default) | report | guests | required, and
/// `app-attest.unattested-guest-limit` (the guest meter's limit for unattested devices). Refresh never needs attestation.
@Suite(.timeLimit(.minutes(5)))
struct AppAttestSpecPolicyTests {
    typealias Spec = AppAttestSpec
    typealias Parts = TestAttestationAuthority.Parts

    static var wrongAppID: Parts {
        var parts = Parts()
        parts.appID = "ZZZZZ99999.com.example.unknown"
        return parts
    }

    static func expectRefused(_ response: TestResponse, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == (code == .attestationRequired ? .forbidden : .badRequest), "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == code, "\(response.text)", sourceLocation: sourceLocation)
    }

    /// The guest meter as the proxy sees it: `X-RateLimit-Limit` of the metered forward-auth rule for `token`.
    static func meterLimit(_ spec: Spec, _ token: String, _ deviceID: UUID) async throws -> String? {
        let response = try await spec.authorize(bearer: token, device: deviceID)
        #expect(response.status == .ok, "\(response.text)")
        return Spec.header(response, "X-RateLimit-Limit")
    }

    // MARK: - off

    @Test func theDefaultPolicyIsOffAndGuestsNeedNothing() async throws {
        try await Spec.with(policy: nil) { spec in
            let guest = try await spec.guest(UUID())
            #expect(guest.status == .created, "\(guest.text)")
            #expect(try Spec.attClaim(try guest.decode(GuestSessionResponse.self).accessToken) == nil)
            #expect(try await spec.register(UUID(), nil).status == .created)
        }
    }

    /// Off: `app_attest` is not verified and not stored; nothing is refused and no token says `att`.
    @Test func offIgnoresAppAttest() async throws {
        try await Spec.with(policy: "off") { spec in
            let deviceID = UUID()
            let valid = try await spec.register(deviceID, try await spec.evidence(Spec.Device()))
            #expect(valid.status == .created, "\(valid.text)")
            #expect(try Spec.attClaim(try valid.decode(TokenPairResponse.self).accessToken) == nil)
            let wrong = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), Self.wrongAppID))
            #expect(wrong.status == .created, "\(wrong.text)")
            let guest = try await spec.guest(UUID(), evidence: try await spec.evidence(Spec.Device(), Self.wrongAppID))
            #expect(guest.status == .created, "\(guest.text)")
            #expect(try await spec.count("app_attest_keys") == 0)
            // No assertion asked of the device whose attestation was sent.
            #expect(try await spec.guest(deviceID).status == .created)
        }
    }

    // MARK: - report

    /// Report: an attestation that fails is downgraded — the request goes on, the device stays unattested.
    @Test func reportDowngradesAFailedAttestation() async throws {
        try await Spec.with(policy: "report") { spec in
            let deviceID = UUID()
            let response = try await spec.register(deviceID, try await spec.evidence(Spec.Device(), Self.wrongAppID))
            #expect(response.status == .created, "\(response.text)")
            let pair = try response.decode(TokenPairResponse.self)
            #expect(try Spec.attClaim(pair.accessToken) == nil)
            #expect(try await spec.me(pair.accessToken).devices.map(\.attested) == [false])
            #expect(try await spec.count("app_attest_keys") == 0)
            let guest = try await spec.guest(UUID(), evidence: try await spec.evidence(Spec.Device(), Self.wrongAppID))
            #expect(guest.status == .created, "\(guest.text)")
            #expect(try Spec.attClaim(try guest.decode(GuestSessionResponse.self).accessToken) == nil)
        }
    }

    @Test func reportRecordsAValidAttestation() async throws {
        try await Spec.with(policy: "report") { spec in
            let pair = try await spec.attestByRegistering(UUID(), Spec.Device())
            #expect(try Spec.attClaim(pair.accessToken) == true)
            #expect(try await spec.me(pair.accessToken).devices.map(\.attested) == [true])
        }
    }

    /// Report always issues guest tokens; unattested ones are metered at `unattested-guest-limit` when it is set.
    @Test func reportMetersUnattestedGuestsAtTheUnattestedLimit() async throws {
        try await Spec.with(policy: "report", ["app-attest.unattested-guest-limit": 1]) { spec in
            let plainID = UUID()
            let plain = try await spec.guest(plainID)
            #expect(plain.status == .created, "\(plain.text)")
            let plainToken = try plain.decode(GuestSessionResponse.self).accessToken
            #expect(try await Self.meterLimit(spec, plainToken, plainID) == "1")
            #expect(try await spec.authorize(bearer: plainToken, device: plainID).status == .tooManyRequests)
            let attestedID = UUID()
            let attested = try await spec.attestByGuest(attestedID, Spec.Device())
            #expect(try await Self.meterLimit(spec, attested.accessToken, attestedID) == "5")
        }
    }

    @Test func reportWithoutTheUnattestedLimitMetersEveryGuestAlike() async throws {
        try await Spec.with(policy: "report") { spec in
            let deviceID = UUID()
            let token = try await spec.guest(deviceID).decode(GuestSessionResponse.self).accessToken
            #expect(try await Self.meterLimit(spec, token, deviceID) == "5")
        }
    }

    // MARK: - guests

    @Test func guestsRefusesAGuestTokenToAnUnattestedDevice() async throws {
        try await Spec.with(policy: "guests") { spec in
            Self.expectRefused(try await spec.guest(UUID()), .attestationRequired)
            // Registering stays open to unattested devices.
            let pair = try await spec.register(UUID(), nil)
            #expect(pair.status == .created, "\(pair.text)")
            #expect(try Spec.attClaim(try pair.decode(TokenPairResponse.self).accessToken) == nil)
        }
    }

    /// Guests: a failing `app_attest` is refused, never downgraded, on both routes.
    @Test func guestsRefusesAFailingAttestationOnBothRoutes() async throws {
        try await Spec.with(policy: "guests") { spec in
            Self.expectRefused(try await spec.register(UUID(), try await spec.evidence(Spec.Device(), Self.wrongAppID)), .invalidAttestation)
            Self.expectRefused(try await spec.guest(UUID(), evidence: try await spec.evidence(Spec.Device(), Self.wrongAppID)), .invalidAttestation)
            #expect(try await spec.rows().values.allSatisfy { $0 == 0 })
        }
    }

    /// Guests with `unattested-guest-limit`: an unattested device gets a guest token, metered at that limit.
    @Test func guestsWithTheUnattestedLimitMetersUnattestedGuestsAtIt() async throws {
        try await Spec.with(policy: "guests", ["app-attest.unattested-guest-limit": 1]) { spec in
            let plainID = UUID()
            let plain = try await spec.guest(plainID)
            #expect(plain.status == .created, "\(plain.text)")
            let token = try plain.decode(GuestSessionResponse.self).accessToken
            #expect(try Spec.attClaim(token) == nil)
            #expect(try await Self.meterLimit(spec, token, plainID) == "1")
            let second = try await spec.authorize(bearer: token, device: plainID)
            #expect(second.status == .tooManyRequests)
            let attestedID = UUID()
            let attested = try await spec.attestByGuest(attestedID, Spec.Device())
            for _ in 0..<5 { #expect(try await spec.authorize(bearer: attested.accessToken, device: attestedID).status == .ok) }
            #expect(try await spec.authorize(bearer: attested.accessToken, device: attestedID).status == .tooManyRequests)
        }
    }

    /// "Done when": with policy `guests`, an unattested fresh UUID is refused a guest token while an attested device gets
    /// one and its meter.
    @Test func endToEndUnderGuests() async throws {
        try await Spec.with(policy: "guests") { spec in
            let fresh = try await spec.guest(UUID())
            Self.expectRefused(fresh, .attestationRequired)

            let deviceID = UUID()
            let device = TestAttestationAuthority.Device()
            let first = try await spec.attestByGuest(deviceID, device)
            #expect(try Spec.attClaim(first.accessToken) == true)
            for remaining in (0..<5).reversed() {
                let admitted = try await spec.authorize(bearer: first.accessToken, device: deviceID)
                #expect(admitted.status == .ok, "\(admitted.text)")
                #expect(Spec.header(admitted, "X-Latchkey-Attested") == "true")
                #expect(Spec.header(admitted, "X-RateLimit-Limit") == "5")
                #expect(Spec.header(admitted, "X-RateLimit-Remaining") == String(remaining))
            }
            #expect(try await spec.authorize(bearer: first.accessToken, device: deviceID).status == .tooManyRequests)
            // The next guest token is proved with an assertion, and shares the device's meter.
            let next = try await spec.provenGuest(deviceID, device, counter: 1)
            #expect(next.status == .created, "\(next.text)")
            let token = try next.decode(GuestSessionResponse.self).accessToken
            #expect(try await spec.authorize(bearer: token, device: deviceID).status == .tooManyRequests)
        }
    }

    // MARK: - required

    @Test func requiredRefusesAnUnattestedRegistrationAndGuest() async throws {
        try await Spec.with(policy: "required") { spec in
            Self.expectRefused(try await spec.register(UUID(), nil), .attestationRequired)
            Self.expectRefused(try await spec.guest(UUID()), .attestationRequired)
            Self.expectRefused(try await spec.register(UUID(), try await spec.evidence(Spec.Device(), Self.wrongAppID)), .invalidAttestation)
            #expect(try await spec.rows().values.allSatisfy { $0 == 0 })
            let pair = try await spec.attestByRegistering(UUID(), Spec.Device())
            #expect(try Spec.attClaim(pair.accessToken) == true)
        }
    }

    /// Refreshing a session needs no attestation, whatever the policy: an attested session refreshes with its refresh
    /// token alone and keeps `att`; a session begun unattested (before the policy was `required`) refreshes too.
    @Test func refreshNeverNeedsAttestation() async throws {
        try await Spec.with(policy: "report") { spec in
            let unattested = try await spec.register(UUID(), nil).decode(TokenPairResponse.self)
            let (strict, _) = try await Spec.make(
                policy: "required", authority: spec.authority, database: spec.server.databasePath, clock: spec.server.clock)
            try await strict.test(.live) { client in
                let required = Spec(client: client, server: strict, authority: spec.authority)
                let refreshed = try await required.refresh(unattested.refreshToken)
                #expect(refreshed.status == .ok, "\(refreshed.text)")
                #expect(try Spec.attClaim(try refreshed.decode(TokenPairResponse.self).accessToken) == nil)
                let attested = try await required.attestByRegistering(UUID(), Spec.Device())
                let again = try await required.refresh(attested.refreshToken)
                #expect(again.status == .ok, "\(again.text)")
                #expect(try Spec.attClaim(try again.decode(TokenPairResponse.self).accessToken) == true)
            }
        }
    }
}
