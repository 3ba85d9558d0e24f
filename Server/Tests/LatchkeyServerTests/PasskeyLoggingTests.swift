import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// The server's log, at `.trace`, never holds what a passkey ceremony carries: challenges and their IDs, credential
/// IDs, public keys, client data, attestation objects, authenticator data, signatures or user handles — for ceremonies
/// that succeed and for those refused (a clone among them, which is logged, by passkey ID only).
@Suite(.timeLimit(.minutes(3)))
struct PasskeyLoggingTests {
    @Test func noLogLineHoldsCredentialMaterial() async throws {
        let capture = LogCapture()
        let server = try await TestServer.withPasskeys(logger: capture.logger())
        let needles = try await server.test(.live) { client in
            var needles: [String] = []
            var authenticator = SoftwareAuthenticator()
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            let registration = authenticator.register(ceremony, attestation: .packedSelf)
            #expect(try await client.finishPasskeyRegistration(ceremony.challengeID, registration, bearer: device.accessToken).status == .created)
            needles += [
                ceremony.challengeID, LatchkeyAPI.Base64URL.encode(ceremony.challenge), LatchkeyAPI.Base64URL.encode(registration.credentialID),
            ]
            needles += [LatchkeyAPI.Base64URL.encode(registration.clientDataJSON), LatchkeyAPI.Base64URL.encode(registration.attestationObject)]
            let publicKey = try RegistrationAuthenticatorData(try registration.authenticatorData).publicKey
            needles += Self.forms(of: CBOREncoder.encode(publicKey))

            // A refused registration, a sign-in, a refused sign-in and a clone.
            let refusedCeremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            var other = SoftwareAuthenticator()
            other.clientDataOverride.origin = "https://evil.example"
            let refusedRegistration = other.register(refusedCeremony)
            #expect(
                try await client.finishPasskeyRegistration(refusedCeremony.challengeID, refusedRegistration, bearer: device.accessToken).status
                    == .badRequest)
            needles += [refusedCeremony.challengeID, LatchkeyAPI.Base64URL.encode(refusedRegistration.credentialID)]

            for tamper in [false, true] {
                let signIn = try await client.beginPasskeySignIn()
                var signer = authenticator
                signer.corruptsSignatures = tamper
                let assertion = signer.assert(signIn)
                let answer = try await client.finishPasskeySignIn(signIn.challengeID, assertion, deviceID: UUID().uuidString)
                #expect(answer.status == (tamper ? .badRequest : .ok), "\(answer.text)")
                if !tamper { authenticator = signer }
                needles += [signIn.challengeID, LatchkeyAPI.Base64URL.encode(signIn.challenge), LatchkeyAPI.Base64URL.encode(assertion.signature)]
                needles += [LatchkeyAPI.Base64URL.encode(assertion.authenticatorData), LatchkeyAPI.Base64URL.encode(assertion.clientDataJSON)]
                needles += [LatchkeyAPI.Base64URL.encode(assertion.userHandle)]
            }
            var clone = authenticator
            clone.countsSignatures = false
            #expect(try await client.signInWithPasskey(&clone).status == .badRequest)
            #expect(try await server.services.audit.events(AuditQuery(action: "passkey.clone_suspected")).count == 1)
            return needles
        }

        #expect(capture.lines.contains { $0.message == "request" })
        #expect(capture.lines.contains { $0.rendered.contains("counter") }, "the clone is logged")
        let forms = needles.flatMap { [$0] + Self.forms(ofText: $0) }.filter { $0.count >= 12 }
        for line in capture.lines {
            let rendered = line.rendered
            for needle in forms where rendered.contains(needle) {
                Issue.record("a log line holds credential material (\(needle.prefix(6))…): \(line.message) [\(line.metadata.keys.sorted())]")
            }
        }
    }

    /// Base64url, standard base64, hex and Swift's array of `bytes`: every way a log line might write them.
    static func forms(of bytes: [UInt8]) -> [String] {
        [
            LatchkeyAPI.Base64URL.encode(bytes), Data(bytes).base64EncodedString(), bytes.map { String(format: "%02x", $0) }.joined(),
            String(describing: bytes.prefix(8)).dropLast().description,
        ]
    }

    /// The other forms of a base64url text's bytes (none when it is not base64url, as a challenge ID need not be).
    static func forms(ofText text: String) -> [String] {
        guard let bytes = LatchkeyAPI.Base64URL.decode(text), bytes.count >= 8 else { return [] }
        return Self.forms(of: bytes)
    }
}
