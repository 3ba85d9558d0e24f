import Crypto
import Foundation
import LatchkeyCBOR
import SwiftASN1
import X509

/// A stand-in for Apple's App Attest CA: a root, an intermediate and leaves with the nonce extension, issuing
/// attestation objects (each part overridable to make one refusal) and signing assertions with the device's key.
public struct TestAttestationAuthority: Sendable {
    public let rootKey = P384.Signing.PrivateKey()
    public let intermediateKey = P384.Signing.PrivateKey()
    public let root: Certificate
    public let intermediate: Certificate

    /// A CA valid 2020–2045; `rootName` defaults to another name than Apple's.
    public init(rootName: String = "Latchkey Test App Attestation Root CA") throws {
        let rootDN = try DistinguishedName {
            CommonName(rootName)
            OrganizationName("Apple Inc.")
            StateOrProvinceName("California")
        }
        let intermediateDN = try DistinguishedName {
            CommonName("Apple App Attestation CA 1")
            OrganizationName("Apple Inc.")
            StateOrProvinceName("California")
        }
        let authority = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        self.root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(self.rootKey.publicKey),
            notValidBefore: Self.date("2020-03-18T18:32:53Z"), notValidAfter: Self.date("2045-03-15T00:00:00Z"),
            issuer: rootDN, subject: rootDN, signatureAlgorithm: .ecdsaWithSHA384, extensions: authority,
            issuerPrivateKey: .init(self.rootKey))
        self.intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(self.intermediateKey.publicKey),
            notValidBefore: Self.date("2020-03-18T18:39:55Z"), notValidAfter: Self.date("2030-03-13T00:00:00Z"),
            issuer: rootDN, subject: intermediateDN, signatureAlgorithm: .ecdsaWithSHA384, extensions: authority,
            issuerPrivateKey: .init(self.rootKey))
    }

    public static let appID = "ABCDE12345.com.example.latchkey"
    /// When the test leaves are valid: 2026-11-01 to 2026-11-04.
    public static let validFrom = Self.date("2026-11-01T00:00:00Z")
    public static let now = Self.date("2026-11-02T12:00:00Z")

    public static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// One device: its Secure Enclave key stand-in and key ID.
    public struct Device: Sendable {
        public let key = P256.Signing.PrivateKey()
        public init() {}
        public var publicKey: [UInt8] { Array(self.key.publicKey.x963Representation) }
        public var keyID: [UInt8] { Array(SHA256.hash(data: self.publicKey)) }
    }

    /// What an attestation is made of; each field changed makes one refusal.
    public struct Parts: Sendable {
        public var format = "apple-appattest"
        public var appID = TestAttestationAuthority.appID
        public var flags: UInt8 = 0x40
        public var counter: UInt32 = 0
        public var aaguid = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        public var credentialID: [UInt8]?
        public var coseKey: [UInt8]?
        public var trailingAuthData: [UInt8] = []
        /// The client data hash the leaf's nonce is computed over (nil: the one given to `attestation`).
        public var nonceClientDataHash: [UInt8]?
        public var leafNotBefore = TestAttestationAuthority.validFrom
        public var leafNotAfter = TestAttestationAuthority.validFrom.addingTimeInterval(3 * 86_400)
        public var leafKey: P256.Signing.PrivateKey?
        public var includeIntermediate = true
        public var receipt: [UInt8]? = Array("a receipt, opaque to the server".utf8)
        public var trailingObject: [UInt8] = []
        public init() {}
    }

    public func authData(_ device: Device, _ parts: Parts) -> [UInt8] {
        let publicKey = Array(device.key.publicKey.x963Representation)
        let cose =
            parts.coseKey
            ?? CBOREncoder.encode(
                .map([
                    .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .negative(6)),
                    .init(key: .negative(0), value: .unsigned(1)), .init(key: .negative(1), value: .bytes(Array(publicKey[1..<33]))),
                    .init(key: .negative(2), value: .bytes(Array(publicKey[33..<65]))),
                ]))
        let credentialID = parts.credentialID ?? device.keyID
        var bytes = Array(SHA256.hash(data: Array(parts.appID.utf8)))
        bytes.append(parts.flags)
        bytes += withUnsafeBytes(of: parts.counter.bigEndian, Array.init)
        bytes += parts.aaguid
        bytes += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
        return bytes + cose + parts.trailingAuthData
    }

    /// An attestation object for `device` over `clientDataHash`.
    public func attestation(_ device: Device, clientDataHash: [UInt8], _ parts: Parts = Parts()) throws -> [UInt8] {
        let authData = self.authData(device, parts)
        let nonce = Array(SHA256.hash(data: authData + (parts.nonceClientDataHash ?? clientDataHash)))
        let leafKey = parts.leafKey ?? device.key
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: parts.leafNotBefore,
            notValidAfter: parts.leafNotAfter, issuer: self.intermediate.subject,
            subject: try DistinguishedName { CommonName(device.keyID.map { String(format: "%02x", $0) }.joined()) },
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Certificate.Extension(
                    oid: [1, 2, 840, 113635, 100, 8, 2], critical: false, value: ArraySlice([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce))
            },
            issuerPrivateKey: .init(self.intermediateKey))
        var chain: [CBOR] = [.bytes(try Self.der(leaf))]
        if parts.includeIntermediate { chain.append(.bytes(try Self.der(self.intermediate))) }
        var statement: [CBOR.Entry] = [.init(key: .text("x5c"), value: .array(chain))]
        if let receipt = parts.receipt { statement.append(.init(key: .text("receipt"), value: .bytes(receipt))) }
        let object = CBOR.map([
            .init(key: .text("fmt"), value: .text(parts.format)), .init(key: .text("attStmt"), value: .map(statement)),
            .init(key: .text("authData"), value: .bytes(authData)),
        ])
        return CBOREncoder.encode(object) + parts.trailingObject
    }

    /// An assertion by `device` (CBOR `{signature, authenticatorData}`) over `clientDataHash`.
    public static func assertion(
        _ device: Device, clientDataHash: [UInt8], counter: UInt32, appID: String = Self.appID, flags: UInt8 = 0x40,
        trailing: [UInt8] = [], signer: P256.Signing.PrivateKey? = nil, prehashed: Bool = false
    ) throws -> [UInt8] {
        let authenticatorData =
            Array(SHA256.hash(data: Array(appID.utf8))) + [flags] + withUnsafeBytes(of: counter.bigEndian, Array.init) + trailing
        let key = signer ?? device.key
        // iOS signs SHA256(nonce); a signer handing the nonce over as a digest signs the nonce itself.
        let signature =
            prehashed
            ? try key.signature(for: SHA256.hash(data: authenticatorData + clientDataHash))
            : try key.signature(for: Array(SHA256.hash(data: authenticatorData + clientDataHash)))
        return CBOREncoder.encode(
            .map([
                .init(key: .text("signature"), value: .bytes(Array(signature.derRepresentation))),
                .init(key: .text("authenticatorData"), value: .bytes(authenticatorData)),
            ]))
    }

    public static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
