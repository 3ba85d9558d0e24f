import Crypto
import Foundation
import LatchkeyCBOR

/// A passkey authenticator in software that makes real WebAuthn registrations and assertions, for tests.
///
/// One authenticator holds one credential: its key pair and credential ID are made when it is. The knobs below make
/// the responses a relying party must refuse: other client data, missing flags, a corrupted signature, a signature
/// counter that does not move.
public struct SoftwareAuthenticator: Sendable {
    /// The credential's signature algorithm.
    public enum Algorithm: Sendable, CaseIterable {
        /// ECDSA on P-256 with SHA-256 (COSE -7).
        case es256
        /// EdDSA on Ed25519 (COSE -8).
        case ed25519
        /// RSASSA-PKCS1-v1_5 with SHA-256 and a 2048-bit key (COSE -257).
        case rs256
    }

    /// The attestation statement a registration carries.
    public enum Attestation: Sendable, CaseIterable {
        /// Format `none`, an empty statement.
        case none
        /// Format `packed`, signed with the credential key itself.
        case packedSelf
        /// Format `packed`, signed with the key of a self-signed P-256 certificate that names the AAGUID.
        case packedX5C
    }

    /// What to write into client data instead of what the ceremony would: each `nil` member keeps the real value.
    public struct ClientDataOverride: Sendable {
        /// Another `type` than `webauthn.create` or `webauthn.get`.
        public var type: String?
        /// Another `origin`.
        public var origin: String?
        /// A `crossOrigin` value (the real one is `false`).
        public var crossOrigin: Bool?
        /// Another challenge, encoded as the real one is.
        public var challenge: [UInt8]?

        /// An override of the given members.
        public init(type: String? = nil, origin: String? = nil, crossOrigin: Bool? = nil, challenge: [UInt8]? = nil) {
            self.type = type
            self.origin = origin
            self.crossOrigin = crossOrigin
            self.challenge = challenge
        }
    }

    /// The credential's algorithm.
    public let algorithm: Algorithm
    /// The credential ID, 32 random bytes.
    public let credentialID: [UInt8]
    /// The AAGUID written into attested credential data (and into a packed x5c certificate).
    public var aaguid: [UInt8] = Array("latchkey-testing".utf8)
    /// The AAGUID a packed x5c certificate names, when it should differ from ``aaguid``.
    public var certificateAAGUID: [UInt8]?
    /// The signature counter the next response carries (after ``countsSignatures`` has counted the assertion).
    public var signCount: UInt32
    /// Whether each assertion adds one to ``signCount`` first; synced passkeys do not count and always send 0.
    public var countsSignatures = true
    /// The BE flag.
    public var backupEligible: Bool
    /// The BS flag.
    public var backedUp: Bool
    /// The UP flag; clear it to make a response without user presence.
    public var userPresent = true
    /// Client data members to write instead of the real ones.
    public var clientDataOverride = ClientDataOverride()
    /// Whether every signature made (assertions and packed attestation) has its last byte flipped.
    public var corruptsSignatures = false
    /// Extensions to write into authenticator data (with the ED flag), `nil` for none.
    public var extensions: CBOR?
    /// The user handle given at registration, returned with each assertion.
    public private(set) var userHandle: [UInt8] = []

    let key: CredentialKey

    /// The credential public key as a CBOR-encoded COSE_Key, as registration sends it: for tests that store a credential
    /// without a registration ceremony.
    public var credentialPublicKey: [UInt8] { CBOREncoder.encode(self.key.coseKey) }

    /// An authenticator with a new credential of `algorithm`.
    public init(algorithm: Algorithm = .es256, signCount: UInt32 = 0, backupEligible: Bool = true, backedUp: Bool = true) {
        self.algorithm = algorithm
        self.key = CredentialKey(algorithm)
        self.credentialID = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backedUp = backedUp
    }

    /// A registration (`navigator.credentials.create`) of the credential for `userHandle`.
    public mutating func register(
        rpID: String,
        origin: String,
        challenge: [UInt8],
        userHandle: [UInt8],
        userVerified: Bool = true,
        attestation: Attestation = .none
    ) -> PasskeyRegistration {
        self.userHandle = userHandle
        let clientDataJSON = self.clientDataJSON(type: "webauthn.create", origin: origin, challenge: challenge)
        let idLength = [UInt8(self.credentialID.count >> 8), UInt8(self.credentialID.count & 0xFF)]
        let attestedCredentialData = self.aaguid + idLength + self.credentialID + self.credentialPublicKey
        let authenticatorData = self.authenticatorData(rpID: rpID, userVerified: userVerified, attestedCredentialData: attestedCredentialData)
        let (format, statement) = self.attestationStatement(attestation, authenticatorData: authenticatorData, clientDataJSON: clientDataJSON)
        let attestationObject = CBOREncoder.encode(
            .map([
                CBOR.Entry(key: .text("fmt"), value: .text(format)),
                CBOR.Entry(key: .text("attStmt"), value: statement),
                CBOR.Entry(key: .text("authData"), value: .bytes(authenticatorData)),
            ]))
        return PasskeyRegistration(credentialID: self.credentialID, clientDataJSON: clientDataJSON, attestationObject: attestationObject)
    }

    /// An assertion (`navigator.credentials.get`) with the credential.
    public mutating func assert(rpID: String, origin: String, challenge: [UInt8], userVerified: Bool = true) -> PasskeyAssertion {
        if self.countsSignatures { self.signCount &+= 1 }
        let clientDataJSON = self.clientDataJSON(type: "webauthn.get", origin: origin, challenge: challenge)
        let authenticatorData = self.authenticatorData(rpID: rpID, userVerified: userVerified, attestedCredentialData: nil)
        return PasskeyAssertion(
            credentialID: self.credentialID,
            clientDataJSON: clientDataJSON,
            authenticatorData: authenticatorData,
            signature: self.signature(authenticatorData: authenticatorData, clientDataJSON: clientDataJSON),
            userHandle: self.userHandle
        )
    }

    /// The credential key's signature over `authenticatorData` ‖ SHA-256(`clientDataJSON`), as an assertion carries it:
    /// for tests that change authenticator data and sign it again.
    public func signature(authenticatorData: [UInt8], clientDataJSON: [UInt8]) -> [UInt8] {
        self.finished(self.key.signature(for: authenticatorData + SHA256.hash(data: clientDataJSON)))
    }

    /// `signature`, with its last byte flipped when ``corruptsSignatures`` says so.
    func finished(_ signature: [UInt8]) -> [UInt8] {
        guard self.corruptsSignatures, let last = signature.last else { return signature }
        return signature.dropLast() + [last ^ 0x01]
    }
}
