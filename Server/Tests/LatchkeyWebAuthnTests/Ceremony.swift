import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyWebAuthn

/// The relying party, origin and challenge of the tests' ceremonies, and the checks run on a software authenticator's
/// responses.
enum Ceremony {
    static let relyingParty = RelyingParty(
        id: "example.com", origins: ["https://example.com", "https://app.example.com"], userVerificationRequired: true)
    static let origin = "https://example.com"
    static let challenge: [UInt8] = Array(0..<32)

    static func register(
        _ authenticator: inout SoftwareAuthenticator,
        attestation: SoftwareAuthenticator.Attestation = .none,
        userVerified: Bool = true
    ) -> PasskeyRegistration {
        authenticator.register(
            rpID: Self.relyingParty.id,
            origin: Self.origin,
            challenge: Self.challenge,
            userHandle: [7, 7, 7],
            userVerified: userVerified,
            attestation: attestation
        )
    }

    static func verify(
        _ registration: PasskeyRegistration,
        relyingParty: RelyingParty = Self.relyingParty
    ) throws(WebAuthnFailure) -> VerifiedRegistration {
        try WebAuthn.verifyRegistration(
            clientDataJSON: registration.clientDataJSON,
            attestationObject: registration.attestationObject,
            challenge: Self.challenge,
            relyingParty: relyingParty
        )
    }

    static func assert(_ authenticator: inout SoftwareAuthenticator, userVerified: Bool = true) -> PasskeyAssertion {
        authenticator.assert(rpID: Self.relyingParty.id, origin: Self.origin, challenge: Self.challenge, userVerified: userVerified)
    }

    static func verify(
        _ assertion: PasskeyAssertion,
        publicKey: [UInt8],
        storedSignCount: UInt32 = 0,
        relyingParty: RelyingParty = Self.relyingParty
    ) throws(WebAuthnFailure) -> VerifiedAssertion {
        try WebAuthn.verifyAssertion(
            clientDataJSON: assertion.clientDataJSON,
            authenticatorData: assertion.authenticatorData,
            signature: assertion.signature,
            challenge: Self.challenge,
            relyingParty: relyingParty,
            publicKey: publicKey,
            storedSignCount: storedSignCount
        )
    }

    /// Registers `authenticator` and returns the public key the relying party stores.
    static func publicKey(registering authenticator: inout SoftwareAuthenticator) throws -> [UInt8] {
        try Self.verify(Self.register(&authenticator)).publicKey
    }
}

/// The reason `body` was refused for, `nil` when it was not.
func refusal<Value>(_ body: () throws(WebAuthnFailure) -> Value) -> WebAuthnFailure.Reason? {
    do {
        _ = try body()
        return nil
    } catch {
        return error.reason
    }
}

extension PasskeyRegistration {
    /// The attestation object with `key` set to `value`.
    func replacing(_ key: String, with value: CBOR) -> PasskeyRegistration {
        var copy = self
        let entries = try! CBORDecoder().decode(self.attestationObject).mapEntries!
        copy.attestationObject = CBOREncoder.encode(.map(entries.map { $0.key == .text(key) ? CBOR.Entry(key: $0.key, value: value) : $0 }))
        return copy
    }

    /// The authenticator data inside the attestation object.
    var authenticatorData: [UInt8] {
        try! CBORDecoder().decode(self.attestationObject)["authData"]!.bytesValue!
    }

    /// The attestation object with its authenticator data changed by `change`.
    func changingAuthenticatorData(_ change: (inout [UInt8]) -> Void) -> PasskeyRegistration {
        var data = self.authenticatorData
        change(&data)
        return self.replacing("authData", with: .bytes(data))
    }
}
