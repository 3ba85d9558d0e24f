import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34, where "attested" shows: the claim `att: true` only on tokens of attested devices (refreshed ones and guest
/// tokens included), absent otherwise; `X-Latchkey-Attested: true` from forward auth only for such tokens; `users/me`
/// `devices[].attested`.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestSpecVisibilityTests {
    typealias Spec = AppAttestSpec

    @Test func anAttestedSessionCarriesAttThroughEveryRefresh() async throws {
        try await Spec.with { spec in
            let pair = try await spec.attestByRegistering(UUID(), Spec.Device())
            #expect(try Spec.attClaim(pair.accessToken) == true)
            var refreshToken = pair.refreshToken
            for _ in 0..<2 {
                let refreshed = try await spec.refresh(refreshToken)
                #expect(refreshed.status == .ok, "\(refreshed.text)")
                let next = try refreshed.decode(TokenPairResponse.self)
                #expect(try Spec.attClaim(next.accessToken) == true)
                refreshToken = next.refreshToken
            }
        }
    }

    /// Absent, not `false`, on every other token: an unattested session, its refresh, an unattested guest token.
    @Test func attIsAbsentOnTokensOfUnattestedDevices() async throws {
        try await Spec.with(policy: "report") { spec in
            let pair = try await spec.register(UUID(), nil).decode(TokenPairResponse.self)
            #expect(try Spec.payload(pair.accessToken)["att"] == nil)
            let refreshed = try await spec.refresh(pair.refreshToken).decode(TokenPairResponse.self)
            #expect(try Spec.payload(refreshed.accessToken)["att"] == nil)
            let guest = try await spec.guest(UUID()).decode(GuestSessionResponse.self)
            #expect(try Spec.payload(guest.accessToken)["att"] == nil)
        }
    }

    @Test func forwardAuthSaysAttestedOnlyForAttestedDevicesTokens() async throws {
        try await Spec.with(policy: "report") { spec in
            let attestedID = UUID()
            let session = try await spec.attestByRegistering(attestedID, Spec.Device())
            let sessionAnswer = try await spec.authorize(bearer: session.accessToken, device: attestedID)
            #expect(sessionAnswer.status == .ok, "\(sessionAnswer.text)")
            #expect(Spec.header(sessionAnswer, "X-Latchkey-Attested") == "true")

            let guestID = UUID()
            let guest = try await spec.attestByGuest(guestID, Spec.Device())
            #expect(Spec.header(try await spec.authorize(bearer: guest.accessToken, device: guestID), "X-Latchkey-Attested") == "true")

            let plainID = UUID()
            let plain = try await spec.register(plainID, nil).decode(TokenPairResponse.self)
            let plainAnswer = try await spec.authorize(bearer: plain.accessToken, device: plainID)
            #expect(plainAnswer.status == .ok)
            #expect(Spec.header(plainAnswer, "X-Latchkey-Attested") == nil)
            let plainGuestID = UUID()
            let plainGuest = try await spec.guest(plainGuestID).decode(GuestSessionResponse.self)
            #expect(Spec.header(try await spec.authorize(bearer: plainGuest.accessToken, device: plainGuestID), "X-Latchkey-Attested") == nil)
        }
    }

    @Test func usersMeShowsWhetherEachDeviceIsAttested() async throws {
        try await Spec.with(policy: "report") { spec in
            let attestedID = UUID()
            let attested = try await spec.attestByRegistering(attestedID, Spec.Device())
            let profile = try await spec.me(attested.accessToken)
            #expect(profile.devices.map { $0.deviceID.lowercased() } == [attestedID.uuidString.lowercased()])
            #expect(profile.devices.map(\.attested) == [true])
            let plain = try await spec.register(UUID(), nil).decode(TokenPairResponse.self)
            #expect(try await spec.me(plain.accessToken).devices.map(\.attested) == [false])
            // The wire shows the field itself, not only a decoder's default.
            let raw = try await spec.client.send(.get, "/api/v1/users/me", bearer: plain.accessToken)
            let devices = try #require(try Backend.object(raw)["devices"] as? [[String: Any]])
            #expect(devices.first?["attested"] as? Bool == false, "\(raw.text)")
        }
    }

    /// `latchkey devices show <id>` says whether the device ID is attested.
    @Test func devicesShowSaysWhetherTheDeviceIsAttested() async throws {
        try await Spec.with(policy: "report") { spec in
            let attestedID = UUID()
            _ = try await spec.attestByRegistering(attestedID, Spec.Device())
            let plainID = UUID()
            _ = try await spec.register(plainID, nil)
            func attestedLine(_ id: UUID) async throws -> String? {
                let run = try await spec.server.cli("devices", "show", id.uuidString.lowercased())
                #expect(run.exitCode == 0, "\(run)")
                return run.stdoutLines.first { $0.lowercased().contains("attested") }?.lowercased()
            }
            let attested = try #require(try await attestedLine(attestedID))
            #expect(attested.contains("yes") || attested.contains("true"), "\(attested)")
            let plain = try #require(try await attestedLine(plainID))
            #expect(plain.contains("no") || plain.contains("false"), "\(plain)")
        }
    }
}
