import Crypto
import LatchkeyCBOR

/// Authenticator data (§6.1): the RP ID hash, the flags, the signature counter and, when their flags say so, the
/// attested credential data and the extensions — nothing left over.
struct AuthenticatorData {
    /// The credential an authenticator attests at registration (§6.5.1).
    struct AttestedCredential {
        var aaguid: [UInt8]
        var credentialID: [UInt8]
        /// The COSE_Key bytes exactly as sent, and the item they decode to.
        var publicKeyBytes: [UInt8]
        var publicKey: CBOR
    }

    static let maximumCredentialIDLength = 1023

    var relyingPartyIDHash: [UInt8]
    var userPresent: Bool
    var userVerified: Bool
    var backupEligible: Bool
    var backedUp: Bool
    var signCount: UInt32
    var attestedCredential: AttestedCredential?

    init(_ bytes: [UInt8]) throws(WebAuthnFailure) {
        guard bytes.count >= 37 else { throw Self.malformed("is shorter than 37 bytes") }
        let flags = bytes[32]
        self.relyingPartyIDHash = Array(bytes[0..<32])
        self.userPresent = flags & 0x01 != 0
        self.userVerified = flags & 0x04 != 0
        self.backupEligible = flags & 0x08 != 0
        self.backedUp = flags & 0x10 != 0
        self.signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard self.backupEligible || !self.backedUp else { throw Self.malformed("says backed up but not backup eligible") }
        var position = 37
        if flags & 0x40 != 0 {
            self.attestedCredential = try Self.attestedCredential(in: bytes, at: &position)
        }
        if flags & 0x80 != 0 {
            guard let (extensions, consumed) = try? CBORDecoder().decodePrefix(bytes[position...]), extensions.mapEntries != nil
            else { throw Self.malformed("has extensions that are not one CBOR map") }
            position += consumed
        }
        guard position == bytes.count else { throw Self.malformed("has bytes left over after its declared parts") }
    }

    /// Throws unless the data is for `relyingParty` and has the user present, and verified when required.
    func check(for relyingParty: RelyingParty) throws(WebAuthnFailure) {
        guard self.relyingPartyIDHash.constantTimeEquals(SHA256.hash(data: Array(relyingParty.id.utf8))) else {
            throw WebAuthnFailure(.rpIDMismatch, "The authenticator data is for another relying party ID.")
        }
        guard self.userPresent else {
            throw WebAuthnFailure(.userNotPresent, "The authenticator did not see the user present.")
        }
        guard self.userVerified || !relyingParty.userVerificationRequired else {
            throw WebAuthnFailure(.userNotVerified, "The authenticator did not verify the user.")
        }
    }

    private static func attestedCredential(in bytes: [UInt8], at position: inout Int) throws(WebAuthnFailure) -> AttestedCredential {
        guard bytes.count - position >= 18 else { throw Self.malformed("ends inside its attested credential data") }
        let aaguid = Array(bytes[position..<position + 16])
        let idLength = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
        position += 18
        guard idLength <= Self.maximumCredentialIDLength else { throw Self.malformed("has a credential ID over 1023 bytes") }
        guard bytes.count - position >= idLength else { throw Self.malformed("ends inside its credential ID") }
        let credentialID = Array(bytes[position..<position + idLength])
        position += idLength
        guard let (publicKey, consumed) = try? CBORDecoder().decodePrefix(bytes[position...]) else {
            throw Self.malformed("has a credential public key that is not one CBOR item")
        }
        let publicKeyBytes = Array(bytes[position..<position + consumed])
        position += consumed
        return AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKeyBytes: publicKeyBytes, publicKey: publicKey)
    }

    private static func malformed(_ problem: String) -> WebAuthnFailure {
        WebAuthnFailure(.malformed, "The authenticator data \(problem).")
    }
}
