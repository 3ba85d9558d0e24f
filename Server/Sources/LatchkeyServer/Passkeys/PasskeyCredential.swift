import Foundation
import LatchkeyAPI

/// The bytes of a `RegistrationResponseJSON`, its base64url fields decoded: 400 `invalid_request` naming the field that
/// is not base64url, before anything is spent.
struct RegistrationCredential {
    let rawID: [UInt8]
    let clientDataJSON: [UInt8]
    let attestationObject: [UInt8]
    /// The browser's transport hints that look like one (`internal`, `hybrid`, …), at most eight.
    let transports: [String]

    init(_ json: RegistrationResponseJSON) throws {
        self.rawID = try PasskeyCredentialField.credentialID(id: json.id, rawID: json.rawId, type: json.type)
        self.clientDataJSON = try PasskeyCredentialField.bytes(json.response.clientDataJSON, "credential.response.clientDataJSON")
        self.attestationObject = try PasskeyCredentialField.bytes(json.response.attestationObject, "credential.response.attestationObject")
        self.transports = Array(
            (json.response.transports ?? []).filter { hint in
                (1...32).contains(hint.count) && hint.allSatisfy { $0.isASCII && ($0.isLowercase || $0 == "-") }
            }.prefix(8))
    }
}

/// The bytes of an `AuthenticationResponseJSON`, its base64url fields decoded (400 `invalid_request` otherwise).
struct AssertionCredential {
    let rawID: [UInt8]
    let clientDataJSON: [UInt8]
    let authenticatorData: [UInt8]
    let signature: [UInt8]
    let userHandle: [UInt8]?

    init(_ json: AuthenticationResponseJSON) throws {
        self.rawID = try PasskeyCredentialField.credentialID(id: json.id, rawID: json.rawId, type: json.type)
        self.clientDataJSON = try PasskeyCredentialField.bytes(json.response.clientDataJSON, "credential.response.clientDataJSON")
        self.authenticatorData = try PasskeyCredentialField.bytes(json.response.authenticatorData, "credential.response.authenticatorData")
        self.signature = try PasskeyCredentialField.bytes(json.response.signature, "credential.response.signature")
        self.userHandle = try json.response.userHandle.map { try PasskeyCredentialField.bytes($0, "credential.response.userHandle") }
    }
}

enum PasskeyCredentialField {
    /// The longest credential ID WebAuthn allows.
    static let maximumCredentialIDLength = 1023

    static func bytes(_ text: String, _ field: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw ServiceError.invalidRequest("Field \"\(field)\" must be base64url.") }
        return bytes
    }

    /// `rawId`'s bytes, once `id` names the same credential and `type` is `public-key`.
    static func credentialID(id: String, rawID: String, type: String) throws -> [UInt8] {
        let bytes = try Self.bytes(rawID, "credential.rawId")
        guard try Self.bytes(id, "credential.id") == bytes else {
            throw ServiceError.invalidRequest("Fields \"credential.id\" and \"credential.rawId\" must name the same credential.")
        }
        guard type == "public-key" else { throw ServiceError.invalidRequest("Field \"credential.type\" must be \"public-key\".") }
        guard (1...Self.maximumCredentialIDLength).contains(bytes.count) else {
            throw ServiceError.invalidRequest("Field \"credential.rawId\" must be 1 to \(Self.maximumCredentialIDLength) bytes.")
        }
        return bytes
    }
}

extension PasskeyRecord {
    /// The answer that shows it to its user (never its key or credential ID).
    var response: PasskeyResponse {
        PasskeyResponse(passkeyID: self.id, name: self.name, createdAt: self.createdAt, lastUsedAt: self.lastUsedAt, backedUp: self.backedUp)
    }
}
