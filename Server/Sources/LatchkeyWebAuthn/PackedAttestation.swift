import LatchkeyCBOR
import SwiftASN1
import X509

/// The "packed" attestation statement format (§8.2): `alg`, `sig` and, for full attestation, `x5c`.
///
/// The signature is over authenticator data ‖ SHA-256(clientDataJSON). Self attestation signs with the credential key
/// itself; full attestation with the key of the first certificate of `x5c`, whose chain is not checked for trust (the
/// relying party asks for `attestation: "none"`), but whose AAGUID extension, when present, must name the authenticator.
enum PackedAttestation {
    /// id-fido-gen-ce-aaguid: the AAGUID of the authenticator model in an attestation certificate.
    static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    static func verify(
        _ statement: CBOR,
        signedData: [UInt8],
        credential: AuthenticatorData.AttestedCredential,
        credentialKey: CredentialPublicKey
    ) throws(WebAuthnFailure) {
        let members: Set<CBOR> = [.text("alg"), .text("sig"), .text("x5c")]
        guard let entries = statement.mapEntries, entries.allSatisfy({ members.contains($0.key) }),
            let algorithm = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue
        else { throw Self.bad("The packed attestation statement is not a map of alg, sig and an optional x5c.") }
        if let chain = statement["x5c"] {
            guard let certificates = chain.arrayValue?.compactMap(\.bytesValue), let leaf = certificates.first,
                certificates.count == chain.arrayValue?.count
            else { throw Self.bad("The packed attestation's x5c is not an array of certificates.") }
            try Self.verify(signature, algorithm: algorithm, over: signedData, leafCertificate: leaf, aaguid: credential.aaguid)
        } else {
            guard algorithm == credentialKey.algorithm else {
                throw Self.bad("The packed self attestation names another algorithm than the credential key's.")
            }
            guard credentialKey.isValidSignature(signature, for: signedData) else {
                throw Self.bad("The packed self attestation signature does not verify with the credential key.")
            }
        }
    }

    private static func verify(
        _ signature: [UInt8],
        algorithm: Int,
        over signedData: [UInt8],
        leafCertificate: [UInt8],
        aaguid: [UInt8]
    ) throws(WebAuthnFailure) {
        guard let leaf = try? Certificate(derEncoded: leafCertificate) else {
            throw Self.bad("The packed attestation certificate is not an X.509 certificate.")
        }
        let signatureAlgorithm: Certificate.SignatureAlgorithm
        switch algorithm {
        case CredentialPublicKey.Algorithm.es256: signatureAlgorithm = .ecdsaWithSHA256
        case CredentialPublicKey.Algorithm.edDSA: signatureAlgorithm = .ed25519
        case CredentialPublicKey.Algorithm.rs256: signatureAlgorithm = .sha256WithRSAEncryption
        default: throw Self.bad("The packed attestation names an algorithm that is not supported.")
        }
        guard leaf.publicKey.isValidSignature(signature, for: signedData, signatureAlgorithm: signatureAlgorithm) else {
            throw Self.bad("The packed attestation signature does not verify with the certificate's key.")
        }
        // The extension's value is a DER OCTET STRING of the 16 bytes.
        if let named = leaf.extensions[oid: Self.aaguidExtension], Array(named.value) != [0x04, 0x10] + aaguid {
            throw Self.bad("The packed attestation certificate names another AAGUID than the authenticator data.")
        }
    }

    private static func bad(_ detail: String) -> WebAuthnFailure {
        WebAuthnFailure(.badAttestation, detail)
    }
}
