import Crypto
import Foundation
import LatchkeyAppAttestPeer
import LatchkeyCBOR
import Testing
import X509

@testable import LatchkeyAppAttest

/// Apple's published 2026 sample, verified against the pinned root at the time Apple made it.
@Suite struct AppleSampleTests {
    static let keyID = AppAttestBase64.decode("zgSY9YSD+7TaDXssY6WlOPVS1K3Lmk+pFhlcSWE+ZV0=")!
    static let appID = "1234567890.com.example.myapp"
    /// Apple's sample passes the raw challenge bytes as the client data hash.
    static let clientDataHash = Array("example_server_challenge".utf8)
    static let madeAt = TestAttestationAuthority.date("2026-04-21T18:13:12Z")

    static func object() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/apple-sample-attestation", withExtension: "b64"))
        let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try #require(AppAttestBase64.decode(text))
    }

    static func verify(
        appIDs: [String] = [Self.appID], environment: AppAttestEnvironment = .production, keyID: [UInt8] = Self.keyID,
        clientDataHash: [UInt8] = Self.clientDataHash, at time: Date = Self.madeAt, object: [UInt8]? = nil
    ) async throws -> Result<AttestedKey, AppAttestFailure> {
        let verifier = AppAttestVerifier(appIDs: appIDs, environment: environment)
        let bytes = try object ?? Self.object()
        do {
            return .success(try await verifier.verifyAttestation(keyID: keyID, attestationObject: bytes, clientDataHash: clientDataHash, at: time))
        } catch {
            return .failure(error)
        }
    }

    @Test func thePinnedRootIsApplesByItsHash() {
        let root = AppAttestVerifier.appleRoot
        #expect(root.subject.description.contains("Apple App Attestation Root CA"))
        #expect(root.notValidAfter > TestAttestationAuthority.date("2045-01-01T00:00:00Z"))
    }

    @Test func appleSampleVerifiesAgainstThePinnedRoot() async throws {
        let key = try await Self.verify().get()
        #expect(key.keyID == Self.keyID)
        #expect(key.publicKey.count == 65 && key.publicKey.first == 0x04)
        #expect(Array(SHA256.hash(data: key.publicKey)) == Self.keyID)
        #expect(key.appID == Self.appID)
        #expect(key.counter == 0)
        #expect(key.receipt.count > 1000)
    }

    @Test func appleSampleVerifiesBesideExtraRoots() async throws {
        let authority = try TestAttestationAuthority()
        let verifier = AppAttestVerifier(appIDs: ["other.app", Self.appID], environment: .production, extraRoots: [authority.root])
        let key = try await verifier.verifyAttestation(
            keyID: Self.keyID, attestationObject: try Self.object(), clientDataHash: Self.clientDataHash, at: Self.madeAt)
        #expect(key.appID == Self.appID)
    }

    @Test(arguments: [
        ("expired leaf", "2026-05-01T00:00:00Z"), ("leaf not yet valid", "2026-04-20T00:00:00Z"),
    ])
    func appleSampleOutsideItsLeafsDatesIsRefused(_ label: String, _ time: String) async throws {
        let result = try await Self.verify(at: TestAttestationAuthority.date(time))
        #expect(result.failureReason == .certificateChain, "\(label)")
    }

    @Test func appleSampleRefusals() async throws {
        #expect(try await Self.verify(environment: .development).failureReason == .aaguid)
        #expect(try await Self.verify(appIDs: ["1234567890.com.example.other"]).failureReason == .appID)
        var flipped = Self.clientDataHash
        flipped[0] ^= 1
        #expect(try await Self.verify(clientDataHash: flipped).failureReason == .nonce)
        // The SHA-256 of the challenge is not what Apple's sample signed: its client data hash is the raw bytes.
        #expect(try await Self.verify(clientDataHash: Array(SHA256.hash(data: Self.clientDataHash))).failureReason == .nonce)
        var otherKey = Self.keyID
        otherKey[31] ^= 1
        #expect(try await Self.verify(keyID: otherKey).failureReason == .keyID)
    }

    /// Every bit of the authenticator data is covered by the nonce: a flip anywhere in it is refused, never a trap.
    @Test func everyFlippedBitOfTheAuthenticatorDataIsRefused() async throws {
        let object = try Self.object()
        let decoded = try CBORDecoder().decode(object)
        let authData = try #require(decoded["authData"]?.bytesValue)
        let start = try #require(Self.range(of: authData, in: object)).lowerBound
        var refused = 0
        for offset in stride(from: start, to: start + authData.count, by: 3) {
            var bytes = object
            bytes[offset] ^= 0x10
            if case .failure = try await Self.verify(object: bytes) { refused += 1 }
        }
        #expect(refused == (authData.count + 2) / 3)
    }

    /// Cut short anywhere, the object is refused as malformed.
    @Test func everyTruncationIsRefused() async throws {
        let object = try Self.object()
        for length in stride(from: 0, to: object.count, by: 11) {
            #expect(try await Self.verify(object: Array(object[..<length])).failureReason == .malformed, "length \(length)")
        }
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }
}

/// Every refusal of an attestation, each made by changing one part of an object a test CA issues.
@Suite struct AttestationRefusalTests {
    let authority: TestAttestationAuthority
    let device = TestAttestationAuthority.Device()
    let clientDataHash = Array(SHA256.hash(data: Array("a challenge's 32 bytes, decoded.".utf8)))

    init() throws { self.authority = try TestAttestationAuthority() }

    func verify(
        _ parts: TestAttestationAuthority.Parts = .init(), environment: AppAttestEnvironment = .production, keyID: [UInt8]? = nil,
        roots: [Certificate]? = nil, at time: Date = TestAttestationAuthority.now
    ) async throws -> Result<AttestedKey, AppAttestFailure> {
        let object = try self.authority.attestation(self.device, clientDataHash: self.clientDataHash, parts)
        return await self.verify(object, environment: environment, keyID: keyID, roots: roots, at: time)
    }

    func verify(
        _ object: [UInt8], environment: AppAttestEnvironment = .production, keyID: [UInt8]? = nil, roots: [Certificate]? = nil,
        at time: Date = TestAttestationAuthority.now
    ) async -> Result<AttestedKey, AppAttestFailure> {
        let verifier = AppAttestVerifier(
            appIDs: ["OTHER12345.com.example.other", TestAttestationAuthority.appID], environment: environment,
            extraRoots: roots ?? [self.authority.root])
        do {
            return .success(
                try await verifier.verifyAttestation(
                    keyID: keyID ?? self.device.keyID, attestationObject: object, clientDataHash: self.clientDataHash, at: time))
        } catch {
            return .failure(error)
        }
    }

    @Test func aGenuineAttestationVerifies() async throws {
        let key = try await self.verify().get()
        #expect(key.publicKey == self.device.publicKey)
        #expect(key.keyID == self.device.keyID)
        #expect(key.appID == TestAttestationAuthority.appID)
        #expect(key.receipt == Array("a receipt, opaque to the server".utf8))
    }

    @Test func theDevelopmentEnvironmentWantsItsOwnAAGUID() async throws {
        var parts = TestAttestationAuthority.Parts()
        parts.aaguid = Array("appattestdevelop".utf8)
        #expect(try await self.verify(parts, environment: .development).get().counter == 0)
        #expect(try await self.verify(parts).failureReason == .aaguid)  // development AAGUID in production
        #expect(try await self.verify(environment: .development).failureReason == .aaguid)
    }

    /// iOS 27 appends a CBOR map of extensions after the COSE key without setting the ED flag.
    @Test func bytesAfterTheCOSEKeyAreAccepted() async throws {
        var parts = TestAttestationAuthority.Parts()
        parts.trailingAuthData = CBOREncoder.encode(
            .map([
                .init(key: .text("apple_bundle_version_01"), value: .text("1")),
                .init(key: .text("apple_validation_category_01"), value: .bytes([1, 0, 0, 0])),
            ]))
        #expect(try await self.verify(parts).get().keyID == self.device.keyID)
    }

    @Test func eachRefusal() async throws {
        var parts = TestAttestationAuthority.Parts()
        parts.format = "packed"
        #expect(try await self.verify(parts).failureReason == .format)

        parts = .init()
        parts.appID = "ABCDE12345.com.example.stranger"
        #expect(try await self.verify(parts).failureReason == .appID)

        parts = .init()
        parts.nonceClientDataHash = Array(SHA256.hash(data: Array("another challenge".utf8)))
        #expect(try await self.verify(parts).failureReason == .nonce)

        parts = .init()
        parts.counter = 1
        #expect(try await self.verify(parts).failureReason == .counter)

        parts = .init()
        parts.aaguid = [UInt8](repeating: 0, count: 16)
        #expect(try await self.verify(parts).failureReason == .aaguid)

        // The key ID the app sends is another key's.
        #expect(try await self.verify(keyID: TestAttestationAuthority.Device().keyID).failureReason == .keyID)

        // The certificate is for another key than the one the key ID names.
        parts = .init()
        parts.leafKey = P256.Signing.PrivateKey()
        #expect(try await self.verify(parts).failureReason == .keyID)

        // A certificate for another key, whose authenticator data names that key too, under this device's key ID:
        // only the key ID's hash gives it away.
        parts = .init()
        let stranger = TestAttestationAuthority.Device()
        parts.leafKey = stranger.key
        parts.coseKey = Array(
            self.authority.authData(stranger, .init()).dropFirst(55 + 32))
        #expect(try await self.verify(parts).failureReason == .keyID)

        parts = .init()
        parts.credentialID = TestAttestationAuthority.Device().keyID
        #expect(try await self.verify(parts).failureReason == .keyID)

        parts = .init()
        parts.coseKey = CBOREncoder.encode(
            .map([
                .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .negative(1), value: .bytes([UInt8](repeating: 1, count: 32))),
                .init(key: .negative(2), value: .bytes([UInt8](repeating: 2, count: 32))),
            ]))
        #expect(try await self.verify(parts).failureReason == .keyID)
    }

    @Test func theChainIsCheckedAtTheServersTime() async throws {
        var parts = TestAttestationAuthority.Parts()
        parts.leafNotAfter = TestAttestationAuthority.now.addingTimeInterval(-1)
        #expect(try await self.verify(parts).failureReason == .certificateChain)  // expired leaf
        parts = .init()
        parts.leafNotBefore = TestAttestationAuthority.now.addingTimeInterval(60)
        #expect(try await self.verify(parts).failureReason == .certificateChain)  // not yet valid
        #expect(try await self.verify(at: TestAttestationAuthority.date("2030-06-01T00:00:00Z")).failureReason == .certificateChain)
    }

    @Test func aChainToAnotherRootIsRefusedOnTheSignatureNotTheName() async throws {
        #expect(try await self.verify(roots: []).failureReason == .certificateChain)  // Apple's root only
        // A root with the same name as the one that issued the chain, but another key.
        let impostor = try TestAttestationAuthority(rootName: "Latchkey Test App Attestation Root CA")
        #expect(impostor.root.subject == self.authority.root.subject)
        #expect(try await self.verify(roots: [impostor.root]).failureReason == .certificateChain)
        // Apple's own root's name on a test root does not make it Apple's.
        let lookalike = try TestAttestationAuthority(rootName: "Apple App Attestation Root CA")
        let object = try lookalike.attestation(self.device, clientDataHash: self.clientDataHash)
        #expect(await self.verify(object, roots: []).failureReason == .certificateChain)
    }

    @Test func malformedObjectsAreRefused() async throws {
        var parts = TestAttestationAuthority.Parts()
        parts.trailingObject = [0x00]
        #expect(try await self.verify(parts).failureReason == .malformed)
        parts = .init()
        parts.receipt = nil
        #expect(try await self.verify(parts).failureReason == .malformed)
        parts = .init()
        parts.includeIntermediate = false
        #expect(try await self.verify(parts).failureReason == .malformed)
        parts = .init()
        parts.flags = 0x01  // no attested credential data
        #expect(try await self.verify(parts).failureReason == .malformed)
        for object: [UInt8] in [[], [0xA0], [0xFF], Array("not cbor".utf8), CBOREncoder.encode(.array([])), CBOREncoder.encode(.text("x"))] {
            #expect(await self.verify(object).failureReason == .malformed)
        }
    }

    /// Flipped bits anywhere in an issued object: refused (or, in the opaque receipt, accepted), never a trap.
    @Test func flippedBitsNeverTrap() async throws {
        let object = try self.authority.attestation(self.device, clientDataHash: self.clientDataHash)
        var outcomes = 0
        for offset in stride(from: 0, to: object.count, by: 5) {
            var bytes = object
            bytes[offset] ^= 0x04
            _ = await self.verify(bytes)
            outcomes += 1
        }
        #expect(outcomes == (object.count + 4) / 5)
    }
}

/// Assertions: ES256 over SHA256(authenticatorData ‖ clientDataHash) with the stored key, the app's RP ID hash, a
/// counter above the stored one.
@Suite struct AssertionTests {
    let device = TestAttestationAuthority.Device()
    let verifier = AppAttestVerifier(appIDs: [TestAttestationAuthority.appID], environment: .production)
    let clientDataHash = AppAttestVerifier.assertionClientDataHash(
        method: "POST", path: "/api/v1/auth/guest", body: Array("{}".utf8), challenge: [UInt8](repeating: 7, count: 32))

    func verify(_ assertion: [UInt8], stored: UInt32 = 0, publicKey: [UInt8]? = nil) -> Result<UInt32, AppAttestFailure> {
        do {
            return .success(
                try self.verifier.verifyAssertion(
                    assertion, clientDataHash: self.clientDataHash, publicKey: publicKey ?? self.device.publicKey,
                    appID: TestAttestationAuthority.appID, storedCounter: stored))
        } catch {
            return .failure(error)
        }
    }

    @Test func theClientDataHashIsTheRawConcatenation() {
        let body = Array(#"{"a":1}"#.utf8)
        let challenge = [UInt8](0..<32)
        let expected = Array(SHA256.hash(data: Array("POST/api/v1/auth/guest".utf8) + Array(SHA256.hash(data: body)) + challenge))
        #expect(AppAttestVerifier.assertionClientDataHash(method: "POST", path: "/api/v1/auth/guest", body: body, challenge: challenge) == expected)
        let empty = Array(SHA256.hash(data: Array("POST/p".utf8) + Array(SHA256.hash(data: [UInt8]())) + challenge))
        #expect(AppAttestVerifier.assertionClientDataHash(method: "POST", path: "/p", body: [], challenge: challenge) == empty)
    }

    @Test func aFreshAssertionVerifiesAndReturnsItsCounter() throws {
        let assertion = try TestAttestationAuthority.assertion(self.device, clientDataHash: self.clientDataHash, counter: 5)
        #expect(try self.verify(assertion, stored: 4).get() == 5)
        // Flags are not checked; bytes after the 37-byte header are ignored.
        let other = try TestAttestationAuthority.assertion(
            self.device, clientDataHash: self.clientDataHash, counter: 6, flags: 0x00, trailing: [0xA1, 0x61, 0x78, 0x01])
        #expect(try self.verify(other, stored: 5).get() == 6)
    }

    @Test func refusals() throws {
        let stale = try TestAttestationAuthority.assertion(self.device, clientDataHash: self.clientDataHash, counter: 3)
        #expect(self.verify(stale, stored: 3).failureReason == .counter)
        #expect(self.verify(stale, stored: 9).failureReason == .counter)
        let otherKey = try TestAttestationAuthority.assertion(
            self.device, clientDataHash: self.clientDataHash, counter: 4, signer: P256.Signing.PrivateKey())
        #expect(self.verify(otherKey).failureReason == .signature)
        #expect(self.verify(stale, publicKey: TestAttestationAuthority.Device().publicKey).failureReason == .signature)
        let otherApp = try TestAttestationAuthority.assertion(
            self.device, clientDataHash: self.clientDataHash, counter: 4, appID: "ABCDE12345.com.example.other")
        #expect(self.verify(otherApp).failureReason == .appID)
        // The nonce handed to ECDSA as if it were already a digest is not how iOS signs.
        let prehashed = try TestAttestationAuthority.assertion(self.device, clientDataHash: self.clientDataHash, counter: 4, prehashed: true)
        #expect(self.verify(prehashed).failureReason == .signature)
        // Over another request.
        let elsewhere = try TestAttestationAuthority.assertion(self.device, clientDataHash: Array(SHA256.hash(data: [1])), counter: 4)
        #expect(self.verify(elsewhere).failureReason == .signature)
    }

    @Test func malformedAssertionsAreRefused() throws {
        let good = try TestAttestationAuthority.assertion(self.device, clientDataHash: self.clientDataHash, counter: 1)
        var cases: [[UInt8]] = [[], [0xA0], good + [0], CBOREncoder.encode(.map([.init(key: .text("signature"), value: .bytes([1]))]))]
        cases.append(
            CBOREncoder.encode(
                .map([
                    .init(key: .text("signature"), value: .bytes([1])), .init(key: .text("authenticatorData"), value: .bytes([1, 2, 3])),
                ])))
        for bytes in cases { #expect(self.verify(bytes).failureReason == .malformed) }
        for length in 0..<good.count { #expect(self.verify(Array(good[..<length])).isFailure) }
    }
}

@Suite struct AppAttestBase64Tests {
    @Test func everyFormIsAcceptedAndStandardIsEmitted() {
        #expect(AppAttestBase64.decode("+/8=") == [0xFB, 0xFF])
        #expect(AppAttestBase64.decode("+/8") == [0xFB, 0xFF])
        #expect(AppAttestBase64.decode("-_8=") == [0xFB, 0xFF])
        #expect(AppAttestBase64.decode("-_8") == [0xFB, 0xFF])
        #expect(AppAttestBase64.encode([0xFB, 0xFF]) == "+/8=")
        for bad in ["", "a", "+/8==", "ab=c", "é", "a b c d", "*"] { #expect(AppAttestBase64.decode(bad) == nil, "\(bad)") }
    }
}

extension Result {
    var failureReason: AppAttestFailure.Reason? {
        if case .failure(let error as AppAttestFailure) = self { return error.reason }
        return nil
    }
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
