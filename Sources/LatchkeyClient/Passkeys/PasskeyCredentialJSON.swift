import Foundation
import LatchkeyAPI

// The bytes an authenticator hands back, as the WebAuthn JSON the server reads: what `registerPasskey` and
// `signInWithPasskey` send from AuthenticationServices' credentials, and what an app running its own request (SwiftUI's
// `AuthorizationController`) can send with ``LatchkeySession/finishPasskeyRegistration(_:)`` and
// ``LatchkeySession/finishPasskeySignIn(_:)``.

extension RegistrationResponseJSON {
    /// A new credential from its raw parts (`ASAuthorizationPlatformPublicKeyCredentialRegistration`'s `credentialID`,
    /// `rawClientDataJSON` and `rawAttestationObject`), each base64url-encoded; `id` and `rawId` are both the credential ID.
    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data, authenticatorAttachment: String? = "platform") {
        let id = Base64URL.encode(credentialID)
        self.init(
            id: id, rawId: id,
            response: Response(clientDataJSON: Base64URL.encode(clientDataJSON), attestationObject: Base64URL.encode(attestationObject)),
            authenticatorAttachment: authenticatorAttachment)
    }
}

extension AuthenticationResponseJSON {
    /// An assertion from its raw parts (`ASAuthorizationPlatformPublicKeyCredentialAssertion`'s `credentialID`,
    /// `rawClientDataJSON`, `rawAuthenticatorData`, `signature` and `userID`), each base64url-encoded; an empty or
    /// missing user handle is left out.
    public init(
        credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?,
        authenticatorAttachment: String? = "platform"
    ) {
        let id = Base64URL.encode(credentialID)
        let response = Response(
            clientDataJSON: Base64URL.encode(clientDataJSON), authenticatorData: Base64URL.encode(authenticatorData),
            signature: Base64URL.encode(signature), userHandle: userHandle.flatMap { $0.isEmpty ? nil : Base64URL.encode($0) })
        self.init(id: id, rawId: id, response: response, authenticatorAttachment: authenticatorAttachment)
    }
}

/// What a platform authenticator's registration request needs of the server's creation options, as bytes.
struct PasskeyCreationParameters: Sendable, Equatable {
    var relyingPartyID: String
    var challenge: Data
    /// The account's name the passkey is saved under (the user's email, else its ID).
    var userName: String
    var displayName: String
    /// The user handle: the user UUID's 16 bytes.
    var userID: Data
    /// `required`, `preferred` or `discouraged`, as WebAuthn and AuthenticationServices spell them.
    var userVerification: String
    var attestation: String
    var excludedCredentialIDs: [Data]

    /// The options' base64url fields decoded; ``LatchkeyError/invalidResponse`` when one is not base64url.
    init(_ options: PublicKeyCredentialCreationOptionsJSON) throws {
        self.relyingPartyID = options.rp.id
        self.challenge = try Self.bytes(options.challenge)
        self.userName = options.user.name
        self.displayName = options.user.displayName
        self.userID = try Self.bytes(options.user.id)
        self.userVerification = options.authenticatorSelection.userVerification
        self.attestation = options.attestation
        self.excludedCredentialIDs = try options.excludeCredentials.map { try Self.bytes($0.id) }
    }

    static func bytes(_ text: String) throws -> Data {
        guard let bytes = Base64URL.decode(text) else { throw LatchkeyError.invalidResponse }
        return Data(bytes)
    }
}

/// What a platform authenticator's assertion request needs of the server's request options, as bytes.
struct PasskeyAssertionParameters: Sendable, Equatable {
    var relyingPartyID: String
    var challenge: Data
    var userVerification: String
    /// Empty from a Latchkey server: the authenticator offers every passkey it holds for the relying party.
    var allowedCredentialIDs: [Data]

    /// The options' base64url fields decoded; ``LatchkeyError/invalidResponse`` when one is not base64url.
    init(_ options: PublicKeyCredentialRequestOptionsJSON) throws {
        self.relyingPartyID = options.rpId
        self.challenge = try PasskeyCreationParameters.bytes(options.challenge)
        self.userVerification = options.userVerification
        self.allowedCredentialIDs = try options.allowCredentials.map { try PasskeyCreationParameters.bytes($0.id) }
    }
}
