#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Passkeys (WebAuthn Level 3). The ceremony's own JSON shapes (`PublicKeyCredentialCreationOptionsJSON`,
// `RegistrationResponseJSON`, …) keep the specification's camelCase names, as browsers' `toJSON()`, Apple's
// AuthenticationServices and py_webauthn produce them; Latchkey's own envelopes around them are snake_case.

extension ErrorCode {
    /// 404 on every passkey route while `passkeys.rp-id` is not set.
    public static let passkeysDisabled = ErrorCode(rawValue: "passkeys_disabled")
    /// 400: the passkey's registration or assertion did not verify (challenge, origin, rp ID, flags, signature,
    /// counter, attestation or key).
    public static let invalidPasskey = ErrorCode(rawValue: "invalid_passkey")
    /// 401: no passkey with that credential ID, or its user is deleted or disabled.
    public static let unknownCredential = ErrorCode(rawValue: "unknown_credential")
    /// 409: that credential ID is already registered (to this user or another).
    public static let passkeyExists = ErrorCode(rawValue: "passkey_exists")
}

extension AuthenticationMethod {
    /// The person was verified by the authenticator itself (Face ID, Touch ID, a PIN): a passkey assertion with UV.
    public static let user = AuthenticationMethod(rawValue: "user")
}

/// Base64url without padding (RFC 4648 §5), the encoding of every binary field in WebAuthn's JSON.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(
            Data(bytes).base64EncodedString().compactMap { character -> Character? in
                switch character {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: character
                }
            })
    }

    /// The bytes, or nil when the text is not base64url (trailing `=` padding is accepted, as some encoders add it;
    /// the standard alphabet's `+` and `/` are not).
    public static func decode(_ text: String) -> [UInt8]? {
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
        guard unpadded.count % 4 != 1, unpadded.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        let base64 = String(unpadded.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        return Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)).map { [UInt8]($0) }
    }
}

/// A credential named in `excludeCredentials` or `allowCredentials`.
public struct PublicKeyCredentialDescriptorJSON: Codable, Sendable, Equatable {
    /// The credential ID, base64url.
    public var id: String
    /// Always `public-key`.
    public var type: String
    public var transports: [String]?
    public init(id: String, type: String = "public-key", transports: [String]? = nil) {
        self.id = id
        self.type = type
        self.transports = transports
    }
}

/// `options` of `POST /api/v1/passkeys/register/options`: what `navigator.credentials.create()` (after
/// `PublicKeyCredential.parseCreationOptionsFromJSON`) or `ASAuthorizationPlatformPublicKeyCredentialProvider` takes.
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Equatable {
    public struct RelyingParty: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }
    public struct User: Codable, Sendable, Equatable {
        /// Base64url of the user UUID's 16 bytes: the `userHandle` of later assertions.
        public var id: String
        public var name: String
        public var displayName: String
        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }
    public struct Parameter: Codable, Sendable, Equatable {
        /// Always `public-key`.
        public var type: String
        /// A COSE algorithm: -7 (ES256), -8 (EdDSA), -257 (RS256).
        public var alg: Int
        public init(type: String = "public-key", alg: Int) {
            self.type = type
            self.alg = alg
        }
    }
    public struct AuthenticatorSelection: Codable, Sendable, Equatable {
        /// Always `required`: passkeys are discoverable credentials.
        public var residentKey: String
        public var requireResidentKey: Bool?
        /// `required` or `preferred` (`passkeys.user-verification`).
        public var userVerification: String
        public init(residentKey: String = "required", requireResidentKey: Bool? = true, userVerification: String) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }
    public var rp: RelyingParty
    public var user: User
    /// 32 random bytes, base64url; single use, bound to this ceremony.
    public var challenge: String
    public var pubKeyCredParams: [Parameter]
    /// Milliseconds (`passkeys.timeout`).
    public var timeout: Int?
    /// The user's passkeys, so an authenticator that already holds one does not make a second.
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]
    public var authenticatorSelection: AuthenticatorSelection
    /// Always `none`.
    public var attestation: String
    public init(
        rp: RelyingParty, user: User, challenge: String, pubKeyCredParams: [Parameter], timeout: Int?,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON], authenticatorSelection: AuthenticatorSelection, attestation: String = "none"
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
    }
}

/// `options` of `POST /api/v1/passkeys/authenticate/options`: what `navigator.credentials.get()` or
/// `ASAuthorizationPlatformPublicKeyCredentialProvider.createCredentialAssertionRequest` takes.
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Equatable {
    /// 32 random bytes, base64url; single use, bound to this ceremony.
    public var challenge: String
    /// Milliseconds (`passkeys.timeout`).
    public var timeout: Int?
    public var rpId: String
    /// Always empty: discoverable credentials, the authenticator offers the passkeys it holds for the rp ID.
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]
    /// `required` or `preferred` (`passkeys.user-verification`).
    public var userVerification: String
    public init(challenge: String, timeout: Int?, rpId: String, allowCredentials: [PublicKeyCredentialDescriptorJSON] = [], userVerification: String)
    {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// `POST /api/v1/passkeys/register/options` (200).
public struct PasskeyRegistrationOptionsResponse: Codable, Sendable, Equatable {
    /// Send it back with the credential to `POST /api/v1/passkeys/register`.
    public var challengeID: String
    public var options: PublicKeyCredentialCreationOptionsJSON
    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case options
    }
    public init(challengeID: String, options: PublicKeyCredentialCreationOptionsJSON) {
        self.challengeID = challengeID
        self.options = options
    }
}

/// `POST /api/v1/passkeys/authenticate/options` (200).
public struct PasskeyAuthenticationOptionsResponse: Codable, Sendable, Equatable {
    /// Send it back with the assertion to `POST /api/v1/passkeys/authenticate`.
    public var challengeID: String
    public var options: PublicKeyCredentialRequestOptionsJSON
    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case options
    }
    public init(challengeID: String, options: PublicKeyCredentialRequestOptionsJSON) {
        self.challengeID = challengeID
        self.options = options
    }
}

/// A new credential, as `PublicKeyCredential.toJSON()` gives it after `navigator.credentials.create()`
/// (WebAuthn Level 3 `RegistrationResponseJSON`). `clientExtensionResults` and unknown members are ignored.
public struct RegistrationResponseJSON: Codable, Sendable, Equatable {
    public struct Response: Codable, Sendable, Equatable {
        /// Base64url.
        public var clientDataJSON: String
        /// Base64url CBOR.
        public var attestationObject: String
        public var transports: [String]?
        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }
    /// The credential ID, base64url.
    public var id: String
    /// The same credential ID, base64url.
    public var rawId: String
    /// Always `public-key`.
    public var type: String
    public var response: Response
    /// `platform` or `cross-platform`.
    public var authenticatorAttachment: String?
    public init(id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// An assertion, as `PublicKeyCredential.toJSON()` gives it after `navigator.credentials.get()`
/// (WebAuthn Level 3 `AuthenticationResponseJSON`).
public struct AuthenticationResponseJSON: Codable, Sendable, Equatable {
    public struct Response: Codable, Sendable, Equatable {
        /// Base64url.
        public var clientDataJSON: String
        /// Base64url.
        public var authenticatorData: String
        /// Base64url.
        public var signature: String
        /// Base64url of the user handle the passkey was made with (the user UUID's 16 bytes).
        public var userHandle: String?
        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }
    /// The credential ID, base64url.
    public var id: String
    /// The same credential ID, base64url.
    public var rawId: String
    /// Always `public-key`.
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?
    public init(id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `POST /api/v1/passkeys/register` (with the Bearer of the session that asked for the options).
public struct PasskeyRegistrationRequest: Codable, Sendable, Equatable {
    public var challengeID: String
    public var credential: RegistrationResponseJSON
    /// What the person calls it ("iPhone"); at most 64 characters. Default "Passkey".
    public var name: String?
    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
        case name
    }
    public init(challengeID: String, credential: RegistrationResponseJSON, name: String? = nil) {
        self.challengeID = challengeID
        self.credential = credential
        self.name = name
    }
}

/// `POST /api/v1/passkeys/authenticate`; answered with a ``TokenPairResponse`` for the passkey's user.
public struct PasskeyAuthenticationRequest: Codable, Sendable, Equatable {
    public var challengeID: String
    public var credential: AuthenticationResponseJSON
    /// This device's UUID (a new phone's): it joins the user's devices, bound to the DPoP key when a proof came.
    public var deviceID: String?
    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
        case deviceID = "device_id"
    }
    public init(challengeID: String, credential: AuthenticationResponseJSON, deviceID: String? = nil) {
        self.challengeID = challengeID
        self.credential = credential
        self.deviceID = deviceID
    }
}

/// One of the user's passkeys: `POST /api/v1/passkeys/register` (201), `PATCH /api/v1/passkeys/{id}` (200), and each
/// item of `GET /api/v1/passkeys`.
public struct PasskeyResponse: Codable, Sendable, Equatable {
    public var passkeyID: String
    public var name: String
    public var createdAt: Date
    /// The last sign-in with it; absent until the first.
    public var lastUsedAt: Date?
    /// Whether the authenticator says the passkey is synced (iCloud Keychain, a password manager): the BS flag.
    public var backedUp: Bool
    enum CodingKeys: String, CodingKey {
        case passkeyID = "passkey_id"
        case name
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case backedUp = "backed_up"
    }
    public init(passkeyID: String, name: String, createdAt: Date, lastUsedAt: Date? = nil, backedUp: Bool) {
        self.passkeyID = passkeyID
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.backedUp = backedUp
    }
}

/// `GET /api/v1/passkeys`.
public struct PasskeyListResponse: Codable, Sendable, Equatable {
    public var passkeys: [PasskeyResponse]
    public init(passkeys: [PasskeyResponse]) { self.passkeys = passkeys }
}

/// `PATCH /api/v1/passkeys/{id}`.
public struct PasskeyRenameRequest: Codable, Sendable, Equatable {
    /// At most 64 characters, not blank.
    public var name: String
    public init(name: String) { self.name = name }
}
