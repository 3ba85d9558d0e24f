import Crypto
import Foundation
import LatchkeyCBOR
import LatchkeyPasskeyPeer

/// A registration's authenticator data (WebAuthn §6.1) taken apart, to be put together again with one part changed: how
/// the tests make what no honest authenticator sends.
struct RegistrationAuthenticatorData {
    var rpIDHash: [UInt8]
    var flags: UInt8
    var signCount: [UInt8]
    var aaguid: [UInt8]
    var credentialID: [UInt8]
    /// The credential public key, a COSE_Key.
    var publicKey: CBOR
    /// Whatever follows the attested credential data (the extensions, when the ED flag is set).
    var rest: [UInt8]

    init(_ bytes: [UInt8]) throws {
        let idLength = Int(bytes[53]) << 8 | Int(bytes[54])
        let keyStart = 55 + idLength
        let (publicKey, consumed) = try CBORDecoder().decodePrefix(bytes[keyStart...])
        self.rpIDHash = Array(bytes[0..<32])
        self.flags = bytes[32]
        self.signCount = Array(bytes[33..<37])
        self.aaguid = Array(bytes[37..<53])
        self.credentialID = Array(bytes[55..<keyStart])
        self.publicKey = publicKey
        self.rest = Array(bytes[(keyStart + consumed)...])
    }

    var bytes: [UInt8] {
        let idLength = [UInt8(self.credentialID.count >> 8), UInt8(self.credentialID.count & 0xFF)]
        return self.rpIDHash + [self.flags] + self.signCount + self.aaguid + idLength + self.credentialID + CBOREncoder.encode(self.publicKey)
            + self.rest
    }
}

extension PasskeyRegistration {
    /// The authenticator data inside the attestation object.
    var authenticatorData: [UInt8] {
        get throws {
            guard let bytes = try CBORDecoder().decode(self.attestationObject)["authData"]?.bytesValue else {
                throw TestFailure("the attestation object has no authData")
            }
            return bytes
        }
    }

    /// This registration with the attestation object `{fmt, attStmt, authData}` made anew (a `none` statement unless
    /// told otherwise) around `authenticatorData`.
    func attesting(_ authenticatorData: [UInt8], format: String = "none", statement: CBOR = .map([])) -> PasskeyRegistration {
        var changed = self
        changed.attestationObject = CBOREncoder.encode(
            Self.attestationObject(format: format, statement: statement, authenticatorData: authenticatorData))
        return changed
    }

    /// This registration with its (`none`) authenticator data changed by `change`.
    func changingAuthenticatorData(_ change: (inout RegistrationAuthenticatorData) -> Void) throws -> PasskeyRegistration {
        var parts = try RegistrationAuthenticatorData(try self.authenticatorData)
        change(&parts)
        return self.attesting(parts.bytes)
    }

    static func attestationObject(format: String, statement: CBOR, authenticatorData: [UInt8]) -> CBOR {
        .map([
            CBOR.Entry(key: .text("fmt"), value: .text(format)),
            CBOR.Entry(key: .text("attStmt"), value: statement),
            CBOR.Entry(key: .text("authData"), value: .bytes(authenticatorData)),
        ])
    }
}

/// CBOR the strict decoder refuses though a lenient one reads it: indefinite lengths (RFC 8949 §3.2.2).
enum IndefiniteCBOR {
    /// An indefinite-length map (0xBF … 0xFF) of `entries`, each written definitely.
    static func map(_ entries: [CBOR.Entry]) -> [UInt8] {
        [0xBF] + entries.flatMap { CBOREncoder.encode($0.key) + CBOREncoder.encode($0.value) } + [0xFF]
    }

    /// An indefinite-length byte string (0x5F … 0xFF) of `bytes`, in two chunks.
    static func bytes(_ bytes: [UInt8]) -> [UInt8] {
        let half = bytes.count / 2
        return [0x5F] + CBOREncoder.encode(.bytes(Array(bytes[..<half]))) + CBOREncoder.encode(.bytes(Array(bytes[half...]))) + [0xFF]
    }

    /// An indefinite-length array (0x9F … 0xFF) of `elements`.
    static func array(_ elements: [CBOR]) -> [UInt8] {
        [0x9F] + elements.flatMap(CBOREncoder.encode) + [0xFF]
    }
}

extension CBOR {
    /// A map of integer labels, as COSE keys are.
    static func labelled(_ entries: [(Int, CBOR)]) -> CBOR {
        .map(entries.map { CBOR.Entry(key: CBOR($0.0), value: $0.1) })
    }
}

/// The 16 bytes of a UUID, as a user handle carries a user ID.
func uuidBytes(_ text: String) -> [UInt8] {
    guard let uuid = UUID(uuidString: text) else { return [] }
    return withUnsafeBytes(of: uuid.uuid) { Array($0) }
}

/// `count` random bytes.
func randomBytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255) }
}
