import Foundation

/// What a browser returns from `navigator.credentials.get` for a passkey.
public struct PasskeyAssertion: Sendable {
    /// The credential's ID.
    public var credentialID: [UInt8]
    /// `response.clientDataJSON`.
    public var clientDataJSON: [UInt8]
    /// `response.authenticatorData`.
    public var authenticatorData: [UInt8]
    /// `response.signature`.
    public var signature: [UInt8]
    /// `response.userHandle`: the user handle given at registration.
    public var userHandle: [UInt8]

    private struct Response: Encodable {
        var clientDataJSON: String
        var authenticatorData: String
        var signature: String
        var userHandle: String
    }

    /// The WebAuthn Level 3 `AuthenticationResponseJSON` (what `PublicKeyCredential.toJSON()` gives), bytes as
    /// unpadded base64url.
    public func authenticationResponseJSON() -> Data {
        let response = Response(
            clientDataJSON: SoftwareAuthenticator.base64URLEncode(self.clientDataJSON),
            authenticatorData: SoftwareAuthenticator.base64URLEncode(self.authenticatorData),
            signature: SoftwareAuthenticator.base64URLEncode(self.signature),
            userHandle: SoftwareAuthenticator.base64URLEncode(self.userHandle)
        )
        return PublicKeyCredentialJSON(credentialID: self.credentialID, response: response).encoded()
    }
}
