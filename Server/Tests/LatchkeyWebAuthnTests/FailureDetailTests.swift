import LatchkeyPasskeyPeer
import LatchkeyWebAuthn
import Testing

/// Details are safe to return to a client and to log: none quotes what the ceremony sent.
@Suite struct FailureDetailTests {
    @Test func detailsQuoteNoChallengeOriginOrCredentialID() {
        let sent: [UInt8] = Array(repeating: 0xAB, count: 32)
        let overrides: [SoftwareAuthenticator.ClientDataOverride] = [
            .init(type: "webauthn.secret-type"), .init(origin: "https://secret-origin.test"), .init(crossOrigin: true), .init(challenge: sent),
        ]
        var failures: [WebAuthnFailure] = []
        for override in overrides {
            var authenticator = SoftwareAuthenticator()
            authenticator.clientDataOverride = override
            let registration = Ceremony.register(&authenticator)
            do {
                _ = try Ceremony.verify(registration)
            } catch {
                failures.append(error)
                #expect(!error.detail.contains(SoftwareAuthenticator.base64URLEncode(authenticator.credentialID)))
            }
        }
        #expect(failures.map(\.reason) == [.wrongType, .originNotAllowed, .crossOrigin, .challengeMismatch])
        for failure in failures {
            #expect(failure.description == failure.detail)
            for secret in ["secret", SoftwareAuthenticator.base64URLEncode(sent), SoftwareAuthenticator.base64URLEncode(Ceremony.challenge)] {
                #expect(!failure.detail.contains(secret))
            }
        }
    }
}
