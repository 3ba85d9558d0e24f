import Foundation

/// What a browser returns from `navigator.credentials.create` for a passkey.
public struct PasskeyRegistration: Sendable {
    /// The new credential's ID.
    public var credentialID: [UInt8]
    /// `response.clientDataJSON`.
    public var clientDataJSON: [UInt8]
    /// `response.attestationObject`.
    public var attestationObject: [UInt8]

    private struct Response: Encodable {
        var clientDataJSON: String
        var attestationObject: String
        var transports = ["internal"]
    }

    /// The WebAuthn Level 3 `RegistrationResponseJSON` (what `PublicKeyCredential.toJSON()` gives), bytes as unpadded
    /// base64url.
    public func registrationResponseJSON() -> Data {
        let response = Response(
            clientDataJSON: SoftwareAuthenticator.base64URLEncode(self.clientDataJSON),
            attestationObject: SoftwareAuthenticator.base64URLEncode(self.attestationObject)
        )
        return PublicKeyCredentialJSON(credentialID: self.credentialID, response: response).encoded()
    }
}

/// The members a `PublicKeyCredential`'s JSON has around its `response`.
struct PublicKeyCredentialJSON<Response: Encodable>: Encodable {
    var id: String
    var rawId: String
    var type = "public-key"
    var response: Response
    var authenticatorAttachment = "platform"
    var clientExtensionResults: [String: String] = [:]

    init(credentialID: [UInt8], response: Response) {
        self.id = SoftwareAuthenticator.base64URLEncode(credentialID)
        self.rawId = self.id
        self.response = response
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try! encoder.encode(self)
    }
}
