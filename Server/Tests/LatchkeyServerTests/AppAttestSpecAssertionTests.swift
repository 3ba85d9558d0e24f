import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import NIOCore
import Testing

/// Issue 34, step 4: `POST /api/v1/auth/guest` for an attested device needs `X-App-Attest-Assertion` (base64 CBOR
/// `{signature, authenticatorData}`) over clientDataHash = SHA256("POST" ‖ "/api/v1/auth/guest" ‖ SHA256(body) ‖ the
/// 32 bytes of a fresh challenge sent as `X-App-Attest-Challenge`), with a counter strictly above the stored one.
@Suite(.timeLimit(.minutes(5)))
struct AppAttestSpecAssertionTests {
    typealias Spec = AppAttestSpec
    typealias Device = TestAttestationAuthority.Device

    /// An attested device ID (attested by a guest request) and its key, on a server with policy `policy`.
    static func withAttestedDevice(
        policy: String = "guests", _ body: @Sendable (Spec, UUID, Device) async throws -> Void
    ) async throws {
        try await Spec.with(policy: policy) { spec in
            let deviceID = UUID()
            let device = Device()
            try await spec.attestByGuest(deviceID, device)
            try await body(spec, deviceID, device)
        }
    }

    static func expectInvalidAssertion(_ response: TestResponse, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .unauthorized, "\(comment) \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.envelope?.error.code == .invalidAssertion, "\(comment) \(response.text)", sourceLocation: sourceLocation)
    }

    @Test func aValidAssertionGivesAnAttestedGuestToken() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let response = try await spec.provenGuest(deviceID, device, counter: 1)
            #expect(response.status == .created, "\(response.text)")
            let token = try response.decode(GuestSessionResponse.self).accessToken
            #expect(try Spec.attClaim(token) == true)
            #expect(try Spec.payload(token)["sub"] as? String == "guest:" + deviceID.uuidString.lowercased())
        }
    }

    /// The body's exact bytes are hashed; SHA256 of the empty string when there is none.
    @Test func theAssertionCoversTheExactBody() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let body = #"{ "note" : "exact bytes" }"#
            #expect(try await spec.provenGuest(deviceID, device, counter: 1, body: body).status == .created)
            // Signed over one body, sent with another.
            let proof = try await spec.assertion(device, counter: 2, body: #"{"note":"exact bytes"}"#)
            Self.expectInvalidAssertion(
                try await spec.guest(deviceID, json: body, assertion: proof.assertion, challenge: proof.challenge), "another body")
            // Signed as if there were a body, sent without one.
            let empty = try await spec.assertion(device, counter: 3, body: "{}")
            Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: empty.assertion, challenge: empty.challenge), "no body")
        }
    }

    @Test func anAssertionOverAnotherPathIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            for path in ["/api/v1/auth/register-device", "http://latchkey.test/api/v1/auth/guest", "/api/v1/auth/guest?x=1"] {
                let proof = try await spec.assertion(device, counter: 1, path: path)
                Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge), path)
            }
            #expect(try await spec.provenGuest(deviceID, device, counter: 1).status == .created)
        }
    }

    /// The path signed is the request's path without its query.
    @Test func theQueryIsNotPartOfTheSignedPath() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proof = try await spec.assertion(device, counter: 1)
            let response = try await spec.guest(
                deviceID, assertion: proof.assertion, challenge: proof.challenge, uri: Spec.guestPath + "?source=widget")
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test func aMissingAssertionOrChallengeIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            Self.expectInvalidAssertion(try await spec.guest(deviceID), "neither")
            let proof = try await spec.assertion(device, counter: 1)
            let noChallenge = try await spec.guest(deviceID, assertion: proof.assertion)
            #expect(noChallenge.status.code >= 400 && noChallenge.status.code < 500, "\(noChallenge.text)")
            #expect(noChallenge.status != .created)
            let onlyChallenge = try await spec.guest(deviceID, challenge: try await spec.challenge())
            Self.expectInvalidAssertion(onlyChallenge, "only a challenge")
        }
    }

    /// A counter not strictly above the stored one is a replay.
    @Test func anAssertionWithAStaleCounterIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            #expect(try await spec.provenGuest(deviceID, device, counter: 5).status == .created)
            Self.expectInvalidAssertion(try await spec.provenGuest(deviceID, device, counter: 5), "the same counter")
            Self.expectInvalidAssertion(try await spec.provenGuest(deviceID, device, counter: 4), "a lower counter")
            #expect(try await spec.provenGuest(deviceID, device, counter: 6).status == .created)
        }
    }

    /// The attestation stores counter 0: an assertion at 0 is stale already.
    @Test func theFirstAssertionNeedsACounterAboveZero() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            Self.expectInvalidAssertion(try await spec.provenGuest(deviceID, device, counter: 0))
        }
    }

    @Test func anAssertionByAnotherKeyIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let stranger = Device()
            let proof = try await spec.assertion(device, counter: 1, signer: stranger.key)
            Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge))
            // Another device's own, valid key is no better.
            try await spec.attestByGuest(UUID(), stranger)
            Self.expectInvalidAssertion(try await spec.provenGuest(deviceID, stranger, counter: 2), "another attested key")
        }
    }

    @Test func anAssertionForAnotherAppIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proof = try await spec.assertion(device, counter: 1, appID: "ZZZZZ99999.com.example.unknown")
            Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge))
        }
    }

    /// ES256 over the message nonce (ECDSA over SHA256(nonce)), as iOS signs; the nonce taken as a digest is refused.
    @Test func aSignatureOverTheNonceAsADigestIsRefused() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proof = try await spec.assertion(device, counter: 1, prehashed: true)
            Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge))
        }
    }

    /// The flags byte is not checked; bytes after the 37-byte header are ignored.
    @Test func flagsAndBytesAfterTheHeaderDoNotMatter() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let zeroFlags = try await spec.assertion(device, counter: 1, flags: 0x00)
            #expect(try await spec.guest(deviceID, assertion: zeroFlags.assertion, challenge: zeroFlags.challenge).status == .created)
            let trailing = try await spec.assertion(device, counter: 2, trailing: [1, 2, 3, 4])
            #expect(try await spec.guest(deviceID, assertion: trailing.assertion, challenge: trailing.challenge).status == .created)
        }
    }

    @Test func anAssertionsChallengeIsSingleUseAndMustBeTheServers() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proof = try await spec.assertion(device, counter: 1)
            #expect(try await spec.guest(deviceID, assertion: proof.assertion, challenge: proof.challenge).status == .created)
            // The same challenge again, with a fresh counter signed over it.
            let hash = Spec.assertionClientDataHash(body: [], challenge: try Spec.bytes(ofChallenge: proof.challenge))
            let replay = Spec.base64(try TestAttestationAuthority.assertion(device, clientDataHash: hash, counter: 2))
            let reused = try await spec.guest(deviceID, assertion: replay, challenge: proof.challenge)
            #expect(reused.status.code >= 400 && reused.status.code < 500 && reused.status != .created, "\(reused.text)")
            // A challenge the server never issued.
            let madeUp = Spec.base64((0..<32).map { _ in UInt8.random(in: 0...255) })
            let forged = Spec.assertionClientDataHash(body: [], challenge: try Spec.bytes(ofChallenge: madeUp))
            let forgedAssertion = Spec.base64(try TestAttestationAuthority.assertion(device, clientDataHash: forged, counter: 3))
            let unknown = try await spec.guest(deviceID, assertion: forgedAssertion, challenge: madeUp)
            #expect(unknown.status.code >= 400 && unknown.status.code < 500 && unknown.status != .created, "\(unknown.text)")
            #expect(try await spec.provenGuest(deviceID, device, counter: 4).status == .created)
        }
    }

    /// Two assertions with one counter sent at once: the counter is stored atomically, so exactly one wins.
    @Test func twoRacingAssertionsWithOneCounterOneWins() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proofs = [try await spec.assertion(device, counter: 1), try await spec.assertion(device, counter: 1)]
            let answers = try await racing(2, port: try #require(spec.client.port)) { index in
                .init(
                    Spec.guestPath, method: .post,
                    headers: [
                        HTTPField.Name("X-Device-ID")!: deviceID.uuidString,
                        HTTPField.Name(LatchkeyHeader.appAttestAssertion)!: proofs[index].assertion,
                        HTTPField.Name(LatchkeyHeader.appAttestChallenge)!: proofs[index].challenge,
                    ])
            }
            #expect(answers.filter { $0.status == .created }.count == 1, "\(answers)")
            #expect(answers.filter { $0 == RacedAnswer(status: .unauthorized, code: .invalidAssertion) }.count == 1, "\(answers)")
        }
    }

    /// A fuzzed table of assertions: 401 `invalid_assertion` each, never a 5xx; the stored counter does not move.
    @Test func malformedAssertionsAre401AndNeverA5xx() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let proof = try await spec.assertion(device, counter: 7)
            let valid = Array(try #require(Data(base64Encoded: proof.assertion)))
            var table: [(String, [UInt8])] = [
                ("empty", []), ("garbage", Array("nope".utf8)), ("a CBOR integer", [0x07]), ("a lone break", [0xFF]),
                ("a huge length", [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
                ("deep nesting", [UInt8](repeating: 0x81, count: 5_000) + [0x00]),
            ]
            for length in [1, 10, valid.count / 2, valid.count - 1] { table.append(("truncated to \(length)", Array(valid.prefix(length)))) }
            for offset in [0, 3, 20, valid.count - 10, valid.count - 1] {
                var flipped = valid
                flipped[offset] ^= 0x01
                table.append(("bit flipped at \(offset)", flipped))
            }
            for (name, bytes) in table {
                let challenge = try await spec.challenge()
                Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: Spec.base64(bytes), challenge: challenge), name)
            }
            Self.expectInvalidAssertion(try await spec.guest(deviceID, assertion: "%%% not base64", challenge: try await spec.challenge()), "text")
            // Nothing moved the counter: 1 is still above the stored 0.
            #expect(try await spec.provenGuest(deviceID, device, counter: 1).status == .created)
        }
    }

    /// A device ID attested through register-device needs assertions for guest tokens too (attestation is per device ID).
    @Test func aDeviceAttestedAtRegistrationNeedsAnAssertionForAGuestToken() async throws {
        try await Spec.with { spec in
            let deviceID = UUID()
            let device = Device()
            _ = try await spec.attestByRegistering(deviceID, device)
            Self.expectInvalidAssertion(try await spec.guest(deviceID))
            let proven = try await spec.provenGuest(deviceID, device, counter: 1)
            #expect(proven.status == .created, "\(proven.text)")
            #expect(try Spec.attClaim(try proven.decode(GuestSessionResponse.self).accessToken) == true)
        }
    }

    /// Under `report` an attested device proves possession too (every policy but off).
    @Test func underReportAnAttestedDeviceStillNeedsAnAssertion() async throws {
        try await Self.withAttestedDevice(policy: "report") { spec, deviceID, device in
            Self.expectInvalidAssertion(try await spec.guest(deviceID))
            #expect(try await spec.provenGuest(deviceID, device, counter: 1).status == .created)
        }
    }

    /// "`POST /api/v1/auth/guest` for an attested device needs `X-App-Attest-Assertion`": a new attestation of another key
    /// for an attested device ID, with no assertion by the device's key, is no proof; it must neither give a guest token
    /// nor take the device ID from its key (it did before the fix: the real device's assertions then failed).
    @Test func anotherKeysAttestationCannotTakeAnAttestedDeviceID() async throws {
        try await Self.withAttestedDevice { spec, deviceID, device in
            let intruder = Device()
            let takeover = try await spec.guest(deviceID, evidence: try await spec.evidence(intruder))
            let owner = try await spec.provenGuest(deviceID, device, counter: 1)
            #expect(takeover.status != .created, "\(takeover.status) \(takeover.text)")
            #expect(owner.status == .created, "\(owner.status) \(owner.text)")
        }
    }

    /// `att: true` stands for the device's key: registering an attested device ID (attested through guest, so no device
    /// row yet) without any proof by its key must not give a session whose tokens say `att: true` (before the fix they
    /// did: `att` came from the UUID's stored key, whoever registered it).
    @Test func registeringAnAttestedDeviceIDWithoutProofGivesNoAttestedSession() async throws {
        try await Self.withAttestedDevice { spec, deviceID, _ in
            let response = try await spec.register(deviceID, nil)
            let attested = response.status == .created ? try Spec.attClaim(try response.decode(TokenPairResponse.self).accessToken) : nil
            #expect(attested != true, "\(response.status) \(response.text)")
        }
    }
}
