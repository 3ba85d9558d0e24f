import Crypto
import Foundation
import LatchkeyCBOR
import SwiftASN1
import X509

extension SoftwareAuthenticator {
    /// The format and statement of `attestation` over `authenticatorData` ‖ SHA-256(`clientDataJSON`) (WebAuthn §8.2).
    func attestationStatement(_ attestation: Attestation, authenticatorData: [UInt8], clientDataJSON: [UInt8]) -> (String, CBOR) {
        let signedData = authenticatorData + SHA256.hash(data: clientDataJSON)
        switch attestation {
        case .none:
            return ("none", .map([]))
        case .packedSelf:
            return ("packed", Self.packedStatement(algorithm: self.key.algorithm, signature: self.finished(self.key.signature(for: signedData))))
        case .packedX5C:
            let attestationKey = P256.Signing.PrivateKey()
            let certificate = Self.attestationCertificate(for: attestationKey, aaguid: self.certificateAAGUID ?? self.aaguid)
            let signature = self.finished(Array(try! attestationKey.signature(for: signedData).derRepresentation))
            return ("packed", Self.packedStatement(algorithm: -7, signature: signature, certificate: certificate))
        }
    }

    private static func packedStatement(algorithm: Int, signature: [UInt8], certificate: [UInt8]? = nil) -> CBOR {
        var entries = [
            CBOR.Entry(key: .text("alg"), value: CBOR(algorithm)),
            CBOR.Entry(key: .text("sig"), value: .bytes(signature)),
        ]
        if let certificate { entries.append(CBOR.Entry(key: .text("x5c"), value: .array([.bytes(certificate)]))) }
        return .map(entries)
    }

    /// A self-signed attestation certificate (WebAuthn §8.2.1) naming `aaguid` in id-fido-gen-ce-aaguid, DER-encoded.
    private static func attestationCertificate(for key: P256.Signing.PrivateKey, aaguid: [UInt8]) -> [UInt8] {
        let name = try! DistinguishedName {
            CountryName("SE")
            OrganizationName("Latchkey Tests")
            OrganizationalUnitName("Authenticator Attestation")
            CommonName("Latchkey Software Authenticator")
        }
        let aaguidExtension = Certificate.Extension(
            oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4],
            critical: false,
            value: ([0x04, UInt8(aaguid.count)] + aaguid)[...]
        )
        let certificate = try! Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date(timeIntervalSinceNow: -3600),
            notValidAfter: Date(timeIntervalSinceNow: 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try! Certificate.Extensions([
                aaguidExtension, Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
