import Crypto
import Foundation
import LatchkeyCBOR
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// The App Attest environment whose AAGUID an attestation must carry.
public enum AppAttestEnvironment: String, Sendable, CaseIterable {
    /// `appattest` followed by seven zero bytes.
    case production
    /// `appattestdevelop`.
    case development

    var aaguid: [UInt8] {
        switch self {
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: Array("appattestdevelop".utf8)
        }
    }
}

/// Why an attestation or assertion was refused. `detail` names the step that failed, never key material.
public struct AppAttestFailure: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        /// Not the CBOR, base64 or structure App Attest sends.
        case malformed
        /// `fmt` is not `apple-appattest`.
        case format
        /// The certificates do not chain to a trusted root at the validation time.
        case certificateChain
        /// The leaf's nonce extension is not SHA256(authData ‖ clientDataHash).
        case nonce
        /// The key ID is not SHA-256 of the leaf's public key, or not the credential ID.
        case keyID
        /// The RP ID hash is not SHA-256 of an allowed app ID.
        case appID
        /// The counter is not 0 (attestation) or not above the stored one (assertion).
        case counter
        /// The AAGUID is not the configured environment's.
        case aaguid
        /// The assertion's signature does not verify with the stored key.
        case signature
    }

    public let reason: Reason
    public let detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(self.reason.rawValue): \(self.detail)" }
}

/// A key an attestation proved: what the server keeps for the device.
public struct AttestedKey: Sendable, Equatable {
    /// SHA-256 of the public key (the app's key ID).
    public let keyID: [UInt8]
    /// The P-256 public key, X9.62 uncompressed (65 bytes).
    public let publicKey: [UInt8]
    /// Apple's receipt, opaque.
    public let receipt: [UInt8]
    /// The app ID (`TEAMID.bundle.id`) the attestation is for.
    public let appID: String
    /// The sign counter (0 after an attestation).
    public let counter: UInt32

    public init(keyID: [UInt8], publicKey: [UInt8], receipt: [UInt8], appID: String, counter: UInt32) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.receipt = receipt
        self.appID = appID
        self.counter = counter
    }
}

/// Verifies App Attest attestations and assertions offline, as Apple's "Validating apps that connect to your server"
/// describes, against the pinned Apple App Attestation Root CA (and, for tests, extra roots).
public struct AppAttestVerifier: Sendable {
    /// SHA-256 of the DER of Apple's App Attestation Root CA (valid 2020-03-18 to 2045-03-15, P-384).
    public static let appleRootSHA256 = "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932"
    /// Apple's App Attestation Root CA, from https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem.
    static let appleRootBase64 = """
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYwJAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRp
        b24gUm9vdCBDQTETMBEGA1UECgwKQXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNaFw00NTAz
        MTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlvbiBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMw
        EQYDVQQIDApDYWxpZm9ybmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdhNbJhFs/Ii2FdCgAH
        GbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9auYen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMB
        Af8EBTADAQH/MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwMDaAAwZQIw
        QgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpq
        tijVoyFraWVIyd/dganmrduC1bmTBGwD
        """

    /// Apple's root, pinned: its DER is checked against ``appleRootSHA256`` when first used.
    public static let appleRoot: Certificate = {
        let der = Array(Data(base64Encoded: Self.appleRootBase64.filter { !$0.isWhitespace })!)
        precondition(SHA256.hash(data: der).hexString == Self.appleRootSHA256, "the pinned Apple App Attestation Root CA was altered")
        return try! Certificate(derEncoded: der)
    }()

    /// The certificate extension holding the attestation's nonce.
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    /// The app IDs (`TEAMID.bundle.id`) an attestation or assertion may be for.
    public let appIDs: [String]
    public let environment: AppAttestEnvironment
    /// Roots trusted besides Apple's (tests only; the server warns whenever they are set).
    public let extraRoots: [Certificate]

    public init(appIDs: [String], environment: AppAttestEnvironment, extraRoots: [Certificate] = []) {
        self.appIDs = appIDs
        self.environment = environment
        self.extraRoots = extraRoots
    }

    /// Verifies an attestation object in Apple's order: its CBOR; the chain to a trusted root at `time`; the nonce;
    /// the key ID; the RP ID hash; the counter; the AAGUID; the credential ID. `clientDataHash` is used as given.
    public func verifyAttestation(
        keyID: [UInt8], attestationObject: [UInt8], clientDataHash: [UInt8], at time: Date
    ) async throws(AppAttestFailure) -> AttestedKey {
        // 1. The object: {fmt, attStmt: {x5c, receipt}, authData}.
        let object: CBOR
        do {
            object = try CBORDecoder(maximumDepth: 8, maximumItems: 1024).decode(attestationObject)
        } catch {
            throw AppAttestFailure(.malformed, "The attestation object is not one well-formed CBOR item (\(error)).")
        }
        let members: Set<CBOR> = [.text("fmt"), .text("attStmt"), .text("authData")]
        guard let entries = object.mapEntries, entries.count == 3, Set(entries.map(\.key)) == members,
            let format = object["fmt"]?.textValue, let statement = object["attStmt"], let authData = object["authData"]?.bytesValue
        else { throw AppAttestFailure(.malformed, "The attestation object is not a map of fmt, attStmt and authData.") }
        guard format == "apple-appattest" else { throw AppAttestFailure(.format, "The attestation format is not apple-appattest.") }
        guard let chain = statement["x5c"]?.arrayValue, chain.count >= 2, let receipt = statement["receipt"]?.bytesValue else {
            throw AppAttestFailure(.malformed, "The attestation statement is not x5c (two or more certificates) and a receipt.")
        }
        var certificates: [Certificate] = []
        for item in chain {
            guard let der = item.bytesValue, let certificate = try? Certificate(derEncoded: der) else {
                throw AppAttestFailure(.malformed, "An x5c entry is not a DER X.509 certificate.")
            }
            certificates.append(certificate)
        }
        let data = try Self.authenticatorData(authData)

        // 2. The chain: leaf, intermediates, a trusted root, each valid at `time`.
        let leaf = certificates[0]
        var verifier = Verifier(rootCertificates: CertificateStore([Self.appleRoot] + self.extraRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore(Array(certificates.dropFirst())))
        else { throw AppAttestFailure(.certificateChain, "The certificates do not chain to a trusted App Attest root at the validation time.") }

        // 3. The nonce: SHA256(authData ‖ clientDataHash) in the leaf's extension 1.2.840.113635.100.8.2.
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        guard let stated = Self.nonce(in: leaf) else {
            throw AppAttestFailure(.malformed, "The leaf certificate has no readable App Attest nonce extension.")
        }
        guard constantTimeEquals(stated, nonce) else {
            throw AppAttestFailure(.nonce, "The leaf certificate's nonce is not SHA256(authData ‖ clientDataHash).")
        }

        // 4. The key ID: SHA-256 of the leaf's public key, X9.62 uncompressed.
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AppAttestFailure(.keyID, "The leaf certificate's key is not a P-256 key.")
        }
        let publicKey = Array(key.x963Representation)
        guard Array(SHA256.hash(data: publicKey)) == keyID else {
            throw AppAttestFailure(.keyID, "The key ID is not the SHA-256 of the attested public key.")
        }

        // 5. The RP ID hash: SHA-256 of one of the app IDs.
        guard let appID = self.appIDs.first(where: { Array(SHA256.hash(data: Array($0.utf8))) == data.rpIDHash }) else {
            throw AppAttestFailure(.appID, "The attestation is for another app ID.")
        }
        // 6. The counter: 0.
        guard data.counter == 0 else { throw AppAttestFailure(.counter, "The attestation's counter is not 0.") }
        // 7. The AAGUID: the environment's.
        guard data.aaguid == self.environment.aaguid else {
            throw AppAttestFailure(.aaguid, "The attestation's AAGUID is not the \(self.environment.rawValue) environment's.")
        }
        // 8. The credential ID: the key ID; the COSE key, when it is an EC2 key, the same key.
        guard data.credentialID == keyID else { throw AppAttestFailure(.keyID, "The credential ID is not the key ID.") }
        if let x = data.credentialKey[-2]?.bytesValue, let y = data.credentialKey[-3]?.bytesValue, [0x04] + x + y != publicKey {
            throw AppAttestFailure(.keyID, "The credential public key is not the attested key.")
        }
        return AttestedKey(keyID: keyID, publicKey: publicKey, receipt: receipt, appID: appID, counter: data.counter)
    }

    /// Verifies an assertion (CBOR `{signature, authenticatorData}`): ES256 by `publicKey` over
    /// nonce = SHA256(authenticatorData ‖ clientDataHash) — ECDSA with SHA-256 over the nonce, as iOS signs — the RP ID
    /// hash of `appID`, and a counter above `storedCounter`, which it returns. The flags byte is not checked and bytes
    /// after the 37-byte header are ignored.
    public func verifyAssertion(
        _ assertion: [UInt8], clientDataHash: [UInt8], publicKey: [UInt8], appID: String, storedCounter: UInt32
    ) throws(AppAttestFailure) -> UInt32 {
        let object: CBOR
        do {
            object = try CBORDecoder(maximumDepth: 4, maximumItems: 64).decode(assertion)
        } catch {
            throw AppAttestFailure(.malformed, "The assertion is not one well-formed CBOR item (\(error)).")
        }
        guard object.mapEntries != nil, let signature = object["signature"]?.bytesValue,
            let authenticatorData = object["authenticatorData"]?.bytesValue
        else { throw AppAttestFailure(.malformed, "The assertion is not a map of signature and authenticatorData.") }
        guard authenticatorData.count >= 37 else {
            throw AppAttestFailure(.malformed, "The assertion's authenticator data is shorter than 37 bytes.")
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw AppAttestFailure(.signature, "The stored key is not a P-256 key.")
        }
        let nonce = Array(SHA256.hash(data: authenticatorData + clientDataHash))
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature), key.isValidSignature(ecdsa, for: nonce) else {
            throw AppAttestFailure(.signature, "The assertion's signature does not verify with the device's key.")
        }
        guard Array(authenticatorData[0..<32]) == Array(SHA256.hash(data: Array(appID.utf8))) else {
            throw AppAttestFailure(.appID, "The assertion is for another app ID.")
        }
        let counter = Self.uint32(authenticatorData, at: 33)
        guard counter > storedCounter else {
            throw AppAttestFailure(.counter, "The assertion's counter is not above the device's last one.")
        }
        return counter
    }

    /// The client data hash of an assertion over a request: SHA256(method ‖ path ‖ SHA256(body) ‖ challenge), the raw
    /// concatenation (ASCII method and path, no host or query; SHA-256 of the empty body when there is none).
    public static func assertionClientDataHash(method: String, path: String, body: [UInt8], challenge: [UInt8]) -> [UInt8] {
        let message = Array(method.utf8) + Array(path.utf8) + Array(SHA256.hash(data: body)) + challenge
        return Array(SHA256.hash(data: message))
    }

    // MARK: - Reading the parts

    struct AuthenticatorData {
        var rpIDHash: [UInt8]
        var counter: UInt32
        var aaguid: [UInt8]
        var credentialID: [UInt8]
        var credentialKey: CBOR
    }

    /// The attested credential data of an attestation's authenticator data (the AT flag set); bytes after the COSE key
    /// (the extensions iOS 27 appends without the ED flag) are accepted.
    static func authenticatorData(_ bytes: [UInt8]) throws(AppAttestFailure) -> AuthenticatorData {
        guard bytes.count >= 55, bytes[32] & 0x40 != 0 else {
            throw AppAttestFailure(.malformed, "The authenticator data holds no attested credential data.")
        }
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard length > 0, bytes.count > 55 + length else {
            throw AppAttestFailure(.malformed, "The authenticator data's credential ID or key is cut short.")
        }
        let credentialKey: CBOR
        do {
            (credentialKey, _) = try CBORDecoder(maximumDepth: 4, maximumItems: 64).decodePrefix(bytes[(55 + length)...])
        } catch {
            throw AppAttestFailure(.malformed, "The authenticator data's credential public key is not a CBOR item.")
        }
        guard credentialKey.mapEntries != nil else {
            throw AppAttestFailure(.malformed, "The authenticator data's credential public key is not a COSE key.")
        }
        return AuthenticatorData(
            rpIDHash: Array(bytes[0..<32]), counter: Self.uint32(bytes, at: 33), aaguid: Array(bytes[37..<53]),
            credentialID: Array(bytes[55..<(55 + length)]), credentialKey: credentialKey)
    }

    /// The OCTET STRING in the leaf's nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static func nonce(in leaf: Certificate) -> [UInt8]? {
        guard let value = leaf.extensions[oid: Self.nonceExtension]?.value else { return nil }
        return try? DER.sequence(try DER.parse(Array(value)), identifier: .sequence) { nodes in
            try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { node in
                Array(try ASN1OctetString(derEncoded: node).bytes)
            }
        }
    }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// Base64 as App Attest's clients send it: standard or base64url, padded or not; emitted standard and padded.
public enum AppAttestBase64 {
    public static func decode(_ text: String) -> [UInt8]? {
        var body = Substring(text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
        var padding = 0
        while body.last == "=" && padding < 2 {
            body.removeLast()
            padding += 1
        }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        guard !body.isEmpty, body.allSatisfy(alphabet.contains), body.count % 4 != 1,
            padding == 0 || (body.count + padding) % 4 == 0
        else { return nil }
        return Data(base64Encoded: body + String(repeating: "=", count: (4 - body.count % 4) % 4)).map(Array.init)
    }

    public static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return zip(lhs, rhs).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

extension SHA256.Digest {
    var hexString: String { self.map { String(format: "%02x", $0) }.joined() }
}
