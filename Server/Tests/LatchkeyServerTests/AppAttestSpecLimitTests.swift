import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34: attestation attempts are limited per key ID and per client IP (`limits.app-attest`), never globally
/// (Firebase's global "too many attempts" locked real users out); 0 turns the limit off.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestSpecLimitTests {
    typealias Spec = AppAttestSpec
    typealias Device = TestAttestationAuthority.Device

    static let limited: [String: any Sendable] = ["limits.app-attest.limit": 2, "limits.app-attest.window": 600]

    static var wrongAppID: TestAttestationAuthority.Parts {
        var parts = TestAttestationAuthority.Parts()
        parts.appID = "ZZZZZ99999.com.example.unknown"
        return parts
    }

    static func expectLimited(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .tooManyRequests, "\(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .rateLimited, sourceLocation: sourceLocation)
    }

    @Test func attemptsAreLimitedPerClientIPButNotForOtherAddresses() async throws {
        try await Spec.with(Self.limited) { spec in
            let address = "198.51.100.1"
            for _ in 0..<2 {
                let failed = try await spec.register(UUID(), try await spec.evidence(Device(), Self.wrongAppID, from: address), from: address)
                #expect(failed.envelope?.error.code == .invalidAttestation, "\(failed.text)")
            }
            Self.expectLimited(try await spec.register(UUID(), try await spec.evidence(Device(), from: address), from: address))
            // Another address, another key: not held back by the first address's attempts.
            let other = "198.51.100.2"
            let fine = try await spec.register(UUID(), try await spec.evidence(Device(), from: other), from: other)
            #expect(fine.status == .created, "\(fine.text)")
            spec.server.clock.advance(by: 601)
            #expect(try await spec.register(UUID(), try await spec.evidence(Device(), from: address), from: address).status == .created)
        }
    }

    @Test func attemptsAreLimitedPerKeyIDAcrossAddresses() async throws {
        try await Spec.with(Self.limited) { spec in
            let device = Device()
            for address in ["198.51.100.11", "198.51.100.12"] {
                let failed = try await spec.register(UUID(), try await spec.evidence(device, Self.wrongAppID, from: address), from: address)
                #expect(failed.envelope?.error.code == .invalidAttestation, "\(failed.text)")
            }
            let third = "198.51.100.13"
            Self.expectLimited(try await spec.register(UUID(), try await spec.evidence(device, from: third), from: third))
            // Never global: another key from that address goes through.
            let other = try await spec.register(UUID(), try await spec.evidence(Device(), from: third), from: third)
            #expect(other.status == .created, "\(other.text)")
        }
    }

    /// Guest attestations count under the same limit.
    @Test func guestAttestationsCountToo() async throws {
        try await Spec.with(Self.limited) { spec in
            let address = "198.51.100.21"
            for _ in 0..<2 {
                _ = try await spec.guest(UUID(), evidence: try await spec.evidence(Device(), Self.wrongAppID, from: address), from: address)
            }
            Self.expectLimited(try await spec.guest(UUID(), evidence: try await spec.evidence(Device(), from: address), from: address))
        }
    }

    @Test func aLimitOfZeroIsOff() async throws {
        try await Spec.with(["limits.app-attest.limit": 0]) { spec in
            let device = Device()
            let address = "198.51.100.31"
            for _ in 0..<8 {
                let failed = try await spec.register(UUID(), try await spec.evidence(device, Self.wrongAppID, from: address), from: address)
                #expect(failed.envelope?.error.code == .invalidAttestation, "\(failed.text)")
            }
            #expect(try await spec.register(UUID(), try await spec.evidence(device, from: address), from: address).status == .created)
        }
    }

    /// Never a lockout by someone else: a device ID is no secret (a guest token's `sub`, forward auth's
    /// `X-Latchkey-Device-Id`), so junk assertions sent for it from another address must not spend the real device's
    /// allowance (before the fix the assertion path counted them against the stored key's ID, and the device was refused
    /// 429 for the window).
    @Test func junkAssertionsFromAnotherAddressDoNotLockTheDeviceOut() async throws {
        try await Spec.with(Self.limited) { spec in
            let deviceID = UUID()
            let device = Device()
            try await spec.attestByGuest(deviceID, device)
            for attacker in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] {
                let junk = try await spec.guest(
                    deviceID, assertion: Spec.base64([0xA0]), challenge: try await spec.challenge(from: attacker), from: attacker)
                #expect(junk.status.code >= 400 && junk.status.code < 500)
            }
            let proof = try await spec.assertion(device, counter: 1)
            let real = try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge, from: "198.51.100.99")
            #expect(real.status == .created, "\(real.status) \(real.text)")
        }
    }
}
