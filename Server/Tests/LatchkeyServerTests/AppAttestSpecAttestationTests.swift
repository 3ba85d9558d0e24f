import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34, step 3: `register-device` and `guest` accept `"app_attest": {key_id, attestation_object, challenge}` (base64),
/// with clientDataHash = SHA256 of the challenge's 32 decoded bytes; each refusal the issue lists, over HTTP, is 400
/// `invalid_attestation` (policy `guests`: never downgraded), never a 5xx, and changes no row.
@Suite(.timeLimit(.minutes(5)))
struct AppAttestSpecAttestationTests {
    typealias Spec = AppAttestSpec
    typealias Parts = TestAttestationAuthority.Parts

    /// The two routes that take an attestation.
    enum Route: String, CaseIterable, CustomStringConvertible, Sendable {
        case registerDevice
        case guest
        var description: String { self.rawValue }

        func send(_ spec: Spec, _ deviceID: UUID, _ evidence: AppAttestEvidence) async throws -> TestResponse {
            switch self {
            case .registerDevice: try await spec.register(deviceID, evidence)
            case .guest: try await spec.guest(deviceID, evidence: evidence)
            }
        }

        /// The access token of a 201.
        func accessToken(_ response: TestResponse) throws -> String {
            switch self {
            case .registerDevice: try response.decode(TokenPairResponse.self).accessToken
            case .guest: try response.decode(GuestSessionResponse.self).accessToken
            }
        }
    }

    @Test(arguments: Route.allCases)
    func aValidAttestationMakesTheDeviceAttested(route: Route) async throws {
        try await Spec.with { spec in
            let deviceID = UUID()
            let response = try await route.send(spec, deviceID, try await spec.evidence(Spec.Device()))
            #expect(response.status == .created, "\(response.text)")
            #expect(try Spec.attClaim(try route.accessToken(response)) == true)
            #expect(try await spec.count("app_attest_keys") == 1)
            // Attested: its next guest request must prove possession of the key.
            let bare = try await spec.guest(deviceID)
            #expect(bare.status == .unauthorized)
            #expect(bare.envelope?.error.code == .invalidAssertion, "\(bare.text)")
        }
    }

    /// Base64: standard padded, base64url and unpadded are all accepted; the challenge is echoed exactly as sent.
    @Test func base64URLWithoutPaddingIsAccepted() async throws {
        try await Spec.with { spec in
            let device = TestAttestationAuthority.Device()
            var evidence = try await spec.evidence(device)
            let text = try #require(evidence.attestationObject)
            let object = try #require(Data(base64Encoded: text))
            evidence.keyID = Spec.base64URL(device.keyID)
            evidence.attestationObject = Spec.base64URL(Array(object))
            let response = try await spec.register(UUID(), evidence)
            #expect(response.status == .created, "\(response.text)")
            #expect(try Spec.attClaim(try response.decode(TokenPairResponse.self).accessToken) == true)
        }
    }

    /// iOS 27 writes bytes after the COSE key without the ED flag (Apple's own 2026 sample has them).
    @Test func bytesAfterTheCOSEKeyWithoutTheEDFlagAreAccepted() async throws {
        try await Spec.with { spec in
            var parts = Parts()
            parts.flags = 0x40
            parts.trailingAuthData = [0xA1, 0x61, 0x61, 0x01]  // {"a": 1}
            let response = try await spec.register(UUID(), try await spec.evidence(Spec.Device(), parts))
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test func theDevelopmentEnvironmentTakesTheDevelopmentAAGUIDAndRefusesProductions() async throws {
        try await Spec.with(["app-attest.environment": "development"]) { spec in
            var development = Parts()
            development.aaguid = Array("appattestdevelop".utf8)
            #expect(try await spec.register(UUID(), try await spec.evidence(Spec.Device(), development)).status == .created)
            let production = try await spec.register(UUID(), try await spec.evidence(Spec.Device()))
            #expect(production.status == .badRequest)
            #expect(production.envelope?.error.code == .invalidAttestation, "\(production.text)")
        }
    }

    /// Certificate dates are checked at the server's clock: the same leaf, valid when issued, is refused once the clock
    /// has moved past its end.
    @Test func theLeafsDatesAreCheckedAtTheServersClock() async throws {
        try await Spec.with { spec in
            spec.server.clock.advance(by: 2 * 86_400)  // past the stand-in leaves' end (2026-11-04)
            let response = try await spec.register(UUID(), try await spec.evidence(Spec.Device()))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidAttestation, "\(response.text)")
        }
    }

    /// Either configured app ID is accepted.
    @Test func anyConfiguredAppIDIsAccepted() async throws {
        try await Spec.with { spec async throws in
            var parts = Parts()
            parts.appID = Spec.otherAppID
            #expect(try await spec.register(UUID(), try await spec.evidence(Spec.Device(), parts)).status == .created)
        }
    }

    /// One way an attestation is wrong.
    enum Refusal: String, CaseIterable, CustomStringConvertible, Sendable {
        case wrongAppID
        case wrongNonce
        case keyIDMismatch
        case credentialIDMismatch
        case leafOfAnotherKey
        case counterNotZero
        case developmentAAGUIDInProduction
        case expiredLeaf
        case leafNotYetValid
        case chainToAnotherRoot
        case noIntermediate
        case otherFormat
        case noReceipt
        case bytesAfterTheObject
        case hashOfTheChallengeText
        case challengeBytesUnhashed

        var description: String { self.rawValue }

        func evidence(_ spec: Spec, _ device: TestAttestationAuthority.Device) async throws -> AppAttestEvidence {
            var parts = Parts()
            let now = TestAttestationAuthority.now
            switch self {
            case .wrongAppID: parts.appID = "ZZZZZ99999.com.example.unknown"
            case .wrongNonce: parts.nonceClientDataHash = Spec.sha256(Array("another challenge".utf8))
            case .keyIDMismatch:
                var evidence = try await spec.evidence(device)
                evidence.keyID = Spec.base64(TestAttestationAuthority.Device().keyID)
                return evidence
            case .credentialIDMismatch: parts.credentialID = TestAttestationAuthority.Device().keyID
            case .leafOfAnotherKey: parts.leafKey = TestAttestationAuthority.Device().key
            case .counterNotZero: parts.counter = 1
            case .developmentAAGUIDInProduction: parts.aaguid = Array("appattestdevelop".utf8)
            case .expiredLeaf: parts.leafNotAfter = now.addingTimeInterval(-1)
            case .leafNotYetValid:
                parts.leafNotBefore = now.addingTimeInterval(60)
                parts.leafNotAfter = now.addingTimeInterval(3 * 86_400)
            case .chainToAnotherRoot:
                // Same names as the configured CA, other keys: it fails on the signature, not on names.
                let stranger = AppAttestSpec(client: spec.client, server: spec.server, authority: try TestAttestationAuthority())
                return try await stranger.evidence(device)
            case .noIntermediate: parts.includeIntermediate = false
            case .otherFormat: parts.format = "packed"
            case .noReceipt: parts.receipt = nil
            case .bytesAfterTheObject: parts.trailingObject = [0x00]
            case .hashOfTheChallengeText:
                return try await spec.evidence(device, clientDataHash: { Spec.sha256(Array($0.utf8)) })
            case .challengeBytesUnhashed:
                return try await spec.evidence(device, clientDataHash: { try Spec.bytes(ofChallenge: $0) })
            }
            return try await spec.evidence(device, parts)
        }
    }

    @Test(arguments: Refusal.allCases, Route.allCases)
    func aWrongAttestationIsRefusedAndStoresNothing(refusal: Refusal, route: Route) async throws {
        try await Spec.with { spec in
            let deviceID = UUID()
            let device = TestAttestationAuthority.Device()
            let rows = try await spec.rows()
            let response = try await route.send(spec, deviceID, try await refusal.evidence(spec, device))
            #expect(response.status == .badRequest, "\(refusal): \(response.status) \(response.text)")
            #expect(response.envelope?.error.code == .invalidAttestation, "\(refusal): \(response.text)")
            #expect(try await spec.rows() == rows, "\(refusal) changed rows")
            // The device ID stayed unattested (policy guests: refused a guest token, not asked for an assertion) …
            let guest = try await spec.guest(deviceID)
            #expect(guest.status == .forbidden)
            #expect(guest.envelope?.error.code == .attestationRequired, "\(guest.text)")
            // … and the key can still attest it properly.
            #expect(try await route.send(spec, deviceID, try await spec.evidence(device)).status == .created)
        }
    }

    /// A key ID already attesting one device ID cannot attest another.
    @Test func aKeyAlreadyAttestingAnotherDeviceIsRefused() async throws {
        try await Spec.with { spec in
            let device = TestAttestationAuthority.Device()
            _ = try await spec.attestByRegistering(UUID(), device)
            let rows = try await spec.rows()
            let second = try await spec.register(UUID(), try await spec.evidence(device))
            #expect(second.status == .badRequest)
            #expect(second.envelope?.error.code == .invalidAttestation, "\(second.text)")
            #expect(try await spec.rows() == rows)
        }
    }

    /// Bodies that are not the shape the issue gives: 400 with the envelope, never a 5xx, nothing stored.
    @Test func malformedAppAttestBodiesAre400() async throws {
        try await Spec.with { spec in
            let deviceID = UUID().uuidString
            let bodies = [
                #"{"device_id":"\#(deviceID)","app_attest":"not an object"}"#, #"{"device_id":"\#(deviceID)","app_attest":{"key_id":7}}"#,
                #"{"device_id":"\#(deviceID)","app_attest":{}}"#, #"{"device_id":"\#(deviceID)","app_attest":{"key_id":"AAAA"}}"#,
            ]
            for body in bodies {
                let response = try await spec.register(json: body)
                #expect(response.status == .badRequest, "\(body): \(response.status) \(response.text)")
                #expect(response.envelope != nil)
            }
            for body in ["{", #"{"app_attest":[]}"#, #"{"app_attest":{"challenge":null,"debug_token":5}}"#] {
                let response = try await spec.guest(UUID(), json: body)
                #expect(response.status == .badRequest, "\(body): \(response.status) \(response.text)")
                #expect(response.envelope != nil)
            }
            #expect(try await spec.rows().values.allSatisfy { $0 == 0 })
        }
    }

    @Test func attestationValuesThatAreNotBase64Are400() async throws {
        try await Spec.with { spec in
            let good = try await spec.evidence(Spec.Device())
            var badKey = good
            badKey.keyID = "not base64!*"
            var badObject = try await spec.evidence(Spec.Device())
            badObject.attestationObject = "%%%"
            var badChallenge = try await spec.evidence(Spec.Device())
            badChallenge.challenge = "@@@@"
            for evidence in [badKey, badObject, badChallenge] {
                let response = try await spec.register(UUID(), evidence)
                #expect(response.status == .badRequest, "\(response.text)")
                #expect(response.envelope != nil)
            }
            #expect(try await spec.rows()["users"] == 0)
        }
    }

    static func flip(_ bytes: [UInt8], at offset: Int) -> [UInt8] {
        var bytes = bytes
        bytes[offset] ^= 0x04
        return bytes
    }

    /// A fuzzed table of attestation objects: truncations, bit flips, wrong types, hostile lengths and nesting. Each is a
    /// 400 with the envelope, never a 5xx, and no row changes.
    @Test func malformedAttestationObjectsAre400AndNeverA5xx() async throws {
        try await Spec.with { spec in
            let device = TestAttestationAuthority.Device()
            let rows = try await spec.rows()
            var table: [(String, @Sendable ([UInt8]) -> [UInt8])] = [
                ("empty", { _ in [] }), ("one byte", { Array($0.prefix(1)) }), ("garbage", { _ in Array("not cbor at all".utf8) }),
                ("a CBOR integer", { _ in [0x01] }), ("a CBOR text", { _ in [0x63, 0x61, 0x62, 0x63] }),
                ("a huge byte string length", { _ in [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] }),
                ("a huge map", { _ in [0xBB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] }),
                ("indefinite length", { _ in [0xBF, 0x63] + Array("fmt".utf8) + [0xFF] }),
                ("deep nesting", { _ in [UInt8](repeating: 0x81, count: 5_000) + [0x00] }),
                ("a lone break", { _ in [0xFF] }),
            ]
            for fraction in [4, 3, 2] { table.append(("truncated to 1/\(fraction)", { Array($0.prefix($0.count / fraction)) })) }
            table.append(("less its last byte", { Array($0.dropLast()) }))
            for offset in [0, 1, 2, 7, 40, 200, 400] { table.append(("bit flipped at \(offset)", { Self.flip($0, at: offset % $0.count) })) }
            table.append(("bit flipped in authData", { Self.flip($0, at: $0.count - 60) }))
            for (name, mutate) in table {
                let challenge = try await spec.challenge()
                let hash = Spec.sha256(try Spec.bytes(ofChallenge: challenge))
                let object = mutate(try spec.authority.attestation(device, clientDataHash: hash))
                let evidence = AppAttestEvidence(keyID: Spec.base64(device.keyID), attestationObject: Spec.base64(object), challenge: challenge)
                let response = try await spec.register(UUID(), evidence)
                #expect(response.status == .badRequest, "\(name): \(response.status) \(response.text)")
                // An empty attestation object may be refused as a malformed request before it is verified.
                let codes: [ErrorCode] = name == "empty" ? [.invalidAttestation, .invalidRequest] : [.invalidAttestation]
                #expect(codes.contains { $0 == response.envelope?.error.code }, "\(name): \(response.text)")
            }
            #expect(try await spec.rows() == rows)
        }
    }
}
