import Crypto
import LatchkeyCBOR

/// The relying party's checks of WebAuthn Level 3 ceremonies: registration (§7.1) and authentication (§7.2).
///
/// Both functions take the bytes the browser returned, the challenge the server issued for the ceremony and the relying
/// party, and throw a ``WebAuthnFailure`` (typed throws) for anything they refuse — malformed input of any kind
/// included: no input traps. Supported credential keys are ES256 (P-256), EdDSA (Ed25519) and RS256; supported
/// attestation formats are `none` and `packed` (self and full; certificate chains are not checked for trust).
public enum WebAuthn {
    /// Checks a registration (`navigator.credentials.create`) and returns the credential to store.
    ///
    /// - Parameters:
    ///   - clientDataJSON: `response.clientDataJSON`, decoded from base64url.
    ///   - attestationObject: `response.attestationObject`, decoded from base64url.
    ///   - challenge: the challenge issued for this registration.
    ///   - relyingParty: the relying party the credential is for.
    public static func verifyRegistration(
        clientDataJSON: [UInt8],
        attestationObject: [UInt8],
        challenge: [UInt8],
        relyingParty: RelyingParty
    ) throws(WebAuthnFailure) -> VerifiedRegistration {
        try ClientData.check(clientDataJSON, type: "webauthn.create", challenge: challenge, relyingParty: relyingParty)
        let object = try AttestationObject(attestationObject)
        let authenticatorData = try AuthenticatorData(object.authenticatorData)
        try authenticatorData.check(for: relyingParty)
        guard let credential = authenticatorData.attestedCredential else {
            throw WebAuthnFailure(.malformed, "The registration's authenticator data has no attested credential data.")
        }
        let key = try CredentialPublicKey(cose: credential.publicKey)
        let signedData = object.authenticatorData + SHA256.hash(data: clientDataJSON)
        switch object.format {
        case "none":
            guard object.statement.mapEntries?.isEmpty == true else {
                throw WebAuthnFailure(.badAttestation, "The none attestation statement is not empty.")
            }
        case "packed":
            try PackedAttestation.verify(object.statement, signedData: signedData, credential: credential, credentialKey: key)
        default:
            throw WebAuthnFailure(.unsupportedAttestation, "The attestation format is neither none nor packed.")
        }
        return VerifiedRegistration(
            credentialID: credential.credentialID,
            publicKey: credential.publicKeyBytes,
            algorithm: key.algorithm,
            signCount: authenticatorData.signCount,
            userVerified: authenticatorData.userVerified,
            backupEligible: authenticatorData.backupEligible,
            backedUp: authenticatorData.backedUp,
            aaguid: credential.aaguid,
            attestationFormat: object.format
        )
    }

    /// Checks an assertion (`navigator.credentials.get`) with a stored credential and returns what to update.
    ///
    /// - Parameters:
    ///   - clientDataJSON: `response.clientDataJSON`, decoded from base64url.
    ///   - authenticatorData: `response.authenticatorData`, decoded from base64url.
    ///   - signature: `response.signature`, decoded from base64url; a signature that cannot be parsed is a
    ///     ``WebAuthnFailure/Reason/badSignature``.
    ///   - challenge: the challenge issued for this authentication.
    ///   - relyingParty: the relying party the credential is for.
    ///   - publicKey: the credential's ``VerifiedRegistration/publicKey``.
    ///   - storedSignCount: the signature counter stored with the credential: once it is above 0, the new one must be
    ///     greater.
    public static func verifyAssertion(
        clientDataJSON: [UInt8],
        authenticatorData: [UInt8],
        signature: [UInt8],
        challenge: [UInt8],
        relyingParty: RelyingParty,
        publicKey: [UInt8],
        storedSignCount: UInt32
    ) throws(WebAuthnFailure) -> VerifiedAssertion {
        try ClientData.check(clientDataJSON, type: "webauthn.get", challenge: challenge, relyingParty: relyingParty)
        let parsed = try AuthenticatorData(authenticatorData)
        guard parsed.attestedCredential == nil else {
            throw WebAuthnFailure(.malformed, "The assertion's authenticator data has attested credential data.")
        }
        try parsed.check(for: relyingParty)
        guard let coseKey = try? CBORDecoder().decode(publicKey) else {
            throw WebAuthnFailure(.malformed, "The stored credential public key is not one CBOR item.")
        }
        let key = try CredentialPublicKey(cose: coseKey)
        guard key.isValidSignature(signature, for: authenticatorData + SHA256.hash(data: clientDataJSON)) else {
            throw WebAuthnFailure(.badSignature, "The assertion signature does not verify with the credential's public key.")
        }
        guard storedSignCount == 0 || parsed.signCount > storedSignCount else {
            throw WebAuthnFailure(.signCountNotIncreasing, "The signature counter did not increase: the credential may be cloned.")
        }
        return VerifiedAssertion(
            signCount: parsed.signCount,
            userVerified: parsed.userVerified,
            backupEligible: parsed.backupEligible,
            backedUp: parsed.backedUp
        )
    }
}
