import LatchkeyCBOR

/// The attestation object (§6.5): a CBOR map of exactly `fmt` (text), `attStmt` (a map) and `authData` (bytes).
struct AttestationObject {
    var format: String
    var statement: CBOR
    var authenticatorData: [UInt8]

    init(_ bytes: [UInt8]) throws(WebAuthnFailure) {
        guard let object = try? CBORDecoder().decode(bytes), let entries = object.mapEntries, entries.count == 3,
            let format = object["fmt"]?.textValue,
            let statement = object["attStmt"], statement.mapEntries != nil,
            let authenticatorData = object["authData"]?.bytesValue
        else {
            throw WebAuthnFailure(.malformed, "The attestation object is not a CBOR map of fmt, attStmt and authData.")
        }
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }
}
