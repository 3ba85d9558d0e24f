/// Wire types that carry a credential (a token, a device secret, a nonce, an authorization code) print
/// without it: `description`, `debugDescription`, `dump` and string interpolation show the type and its
/// harmless fields only, so a credential never reaches a log line or an error message by accident.
public protocol CredentialRedacting: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The fields that are safe to show.
    var redactedFields: KeyValuePairs<String, String> { get }
}

extension CredentialRedacting {
    public var description: String {
        let fields = self.redactedFields.map { "\($0.key): \($0.value)" } + ["<credentials redacted>"]
        return "\(Self.self)(\(fields.joined(separator: ", ")))"
    }

    public var debugDescription: String { self.description }

    public var customMirror: Mirror {
        Mirror(self, children: self.redactedFields.map { (label: Optional($0.key), value: $0.value as Any) }, displayStyle: .struct)
    }
}

extension RegisterDeviceRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["deviceID": self.deviceID] }
}

extension RefreshRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension AccessCodeExchangeRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension TokenPairResponse: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> {
        ["userID": self.userID, "sessionID": self.sessionID, "expiresIn": "\(self.expiresIn)"]
    }
}

extension GuestSessionResponse: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["expiresIn": "\(self.expiresIn)"] }
}

extension AppleSignInRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["hasAuthorizationCode": "\(self.authorizationCode != nil)"] }
}

extension TokenExchangeRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension StorageCredentials: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> {
        ["bucket": self.bucket, "prefix": self.prefix, "expiration": "\(self.expiration)"]
    }
}

extension PresignedURL: CredentialRedacting {
    /// The URL's signature is a credential until it expires: only the method and expiry are shown.
    public var redactedFields: KeyValuePairs<String, String> { ["method": self.method.rawValue, "expiresAt": "\(self.expiresAt)"] }
}

// The email and password requests print neither the password nor the code or link token, nor the address: an
// address is personal data, and these values are logged by mistake more often than any other.

extension EmailRegistrationRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension PasswordLoginRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension VerifyEmailRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["by": self.token != nil ? "token" : "code"] }
}

extension ResetPasswordConfirmRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["by": self.token != nil ? "token" : "code"] }
}

extension ChangePasswordRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

// Second factors: the `mfa_token`, a TOTP secret (and the `otpauth` URI that carries it), a code and a recovery code
// are all credentials.

extension MFARequiredResponse: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> {
        ["code": self.error.code.rawValue, "factors": self.factors.map { "\($0.type.rawValue) \($0.id)" }.joined(separator: ", ")]
    }
}

extension TOTPEnrollmentResponse: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["factorID": self.factorID] }
}

extension MFACodeRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { [:] }
}

extension MFAVerifyRequest: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> {
        ["challenge": "\(self.mfaToken != nil)", "by": self.recoveryCode != nil ? "recovery_code" : "code"]
    }
}

extension RecoveryCodesResponse: CredentialRedacting {
    public var redactedFields: KeyValuePairs<String, String> { ["count": "\(self.recoveryCodes.count)"] }
}
