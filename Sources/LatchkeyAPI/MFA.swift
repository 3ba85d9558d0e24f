#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ErrorCode {
    /// 403 on a first-factor sign-in for a user with a confirmed second factor: the body also carries an
    /// ``MFARequiredResponse/mfaToken`` and the user's ``MFARequiredResponse/factors``; finish with
    /// `POST /api/v1/mfa/verify`.
    public static let mfaRequired = ErrorCode(rawValue: "mfa_required")
    /// 401: the `mfa_token` is unknown, expired, already used, or spent by five wrong codes.
    public static let invalidMFAToken = ErrorCode(rawValue: "invalid_mfa_token")
    /// 403: the user has a second factor and this action needs a session that proved it recently
    /// (`POST /api/v1/mfa/verify` with the session's Bearer first).
    public static let aal2Required = ErrorCode(rawValue: "aal2_required")
    /// 409: the user already has a confirmed TOTP factor (remove it first).
    public static let factorExists = ErrorCode(rawValue: "factor_exists")
}

/// How strongly a session's user was authenticated (the `aal` claim, after NIST SP 800-63B's assurance levels).
public struct AuthenticatorAssuranceLevel: OpenWireValue, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// One factor: a device's secret or key, a password, an email code, Apple, a provider's token, an access code.
    public static let aal1 = AuthenticatorAssuranceLevel(rawValue: "aal1")
    /// Two factors: one of the above and a TOTP code or a recovery code.
    public static let aal2 = AuthenticatorAssuranceLevel(rawValue: "aal2")
    public static let allCases: [AuthenticatorAssuranceLevel] = [.aal1, .aal2]
}

/// One way a session's user proved who they are (the `amr` claim's values, after RFC 8176).
public struct AuthenticationMethod: OpenWireValue, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The device's own secret (a device session).
    public static let device = AuthenticationMethod(rawValue: "device")
    /// A proof-of-possession key held by the device (a DPoP-bound session).
    public static let hardwareKey = AuthenticationMethod(rawValue: "hwk")
    /// A password.
    public static let password = AuthenticationMethod(rawValue: "pwd")
    /// A one-time code mailed to the user's address.
    public static let email = AuthenticationMethod(rawValue: "email")
    /// Sign in with Apple.
    public static let apple = AuthenticationMethod(rawValue: "apple")
    /// Google Sign-In (a Google ID token).
    public static let google = AuthenticationMethod(rawValue: "google")
    /// A configured identity provider's token (token exchange).
    public static let federated = AuthenticationMethod(rawValue: "fed")
    /// An access code issued by support.
    public static let accessCode = AuthenticationMethod(rawValue: "access_code")
    /// A TOTP code (RFC 6238).
    public static let otp = AuthenticationMethod(rawValue: "otp")
    /// A single-use recovery code.
    public static let recovery = AuthenticationMethod(rawValue: "recovery")
    public static let allCases: [AuthenticationMethod] = [
        .device, .hardwareKey, .password, .email, .apple, .google, .federated, .accessCode, .otp, .recovery, .user,
    ]
}

/// A second factor's kind; today only `totp`.
public struct FactorType: OpenWireValue, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let totp = FactorType(rawValue: "totp")
    public static let allCases: [FactorType] = [.totp]
}

/// The body of a 403 `mfa_required`: the error envelope plus what finishing the sign-in needs.
public struct MFARequiredResponse: Codable, Sendable, Equatable {
    /// One of the user's confirmed factors.
    public struct Factor: Codable, Sendable, Equatable {
        public var id: String
        public var type: FactorType
        public init(id: String, type: FactorType) {
            self.id = id
            self.type = type
        }
    }
    public var error: ErrorEnvelope.Detail
    /// Single use; lives five minutes and dies after five wrong codes. Send it to `POST /api/v1/mfa/verify`.
    public var mfaToken: String
    public var factors: [Factor]
    enum CodingKeys: String, CodingKey {
        case error
        case mfaToken = "mfa_token"
        case factors
    }
    public init(error: ErrorEnvelope.Detail, mfaToken: String, factors: [Factor]) {
        self.error = error
        self.mfaToken = mfaToken
        self.factors = factors
    }
}

/// `POST /api/v1/mfa/totp` (201): a new, unconfirmed TOTP factor. The secret is shown this once.
public struct TOTPEnrollmentResponse: Codable, Sendable, Equatable {
    public var factorID: String
    /// RFC 4648 base32, no padding: what an authenticator app takes when typed in.
    public var secret: String
    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…`, what a QR code carries.
    public var otpauthURI: String
    enum CodingKeys: String, CodingKey {
        case factorID = "factor_id"
        case secret
        case otpauthURI = "otpauth_uri"
    }
    public init(factorID: String, secret: String, otpauthURI: String) {
        self.factorID = factorID
        self.secret = secret
        self.otpauthURI = otpauthURI
    }
}

/// `POST /api/v1/mfa/totp/{factor_id}/confirm`: a code from the authenticator app.
public struct MFACodeRequest: Codable, Sendable, Equatable {
    public var code: String
    public init(code: String) { self.code = code }
}

/// The answer of a confirm (200) and of `POST /api/v1/mfa/recovery-codes`: ten single-use codes, `XXXXX-XXXXX`,
/// shown this once.
public struct RecoveryCodesResponse: Codable, Sendable, Equatable {
    public var recoveryCodes: [String]
    enum CodingKeys: String, CodingKey { case recoveryCodes = "recovery_codes" }
    public init(recoveryCodes: [String]) { self.recoveryCodes = recoveryCodes }
}

/// `POST /api/v1/mfa/verify`: with an `mfa_token` (finishing a sign-in) or with a session's Bearer (a step-up) and
/// no token; exactly one of `code` and `recovery_code`.
public struct MFAVerifyRequest: Codable, Sendable, Equatable {
    public var mfaToken: String?
    public var code: String?
    public var recoveryCode: String?
    enum CodingKeys: String, CodingKey {
        case mfaToken = "mfa_token"
        case code
        case recoveryCode = "recovery_code"
    }
    public init(mfaToken: String? = nil, code: String? = nil, recoveryCode: String? = nil) {
        self.mfaToken = mfaToken
        self.code = code
        self.recoveryCode = recoveryCode
    }
}

/// `GET /api/v1/mfa/factors`.
public struct MFAFactorsResponse: Codable, Sendable, Equatable {
    public struct Factor: Codable, Sendable, Equatable {
        public var id: String
        public var type: FactorType
        public var confirmed: Bool
        public var createdAt: Date
        enum CodingKeys: String, CodingKey {
            case id, type, confirmed
            case createdAt = "created_at"
        }
        public init(id: String, type: FactorType, confirmed: Bool, createdAt: Date) {
            self.id = id
            self.type = type
            self.confirmed = confirmed
            self.createdAt = createdAt
        }
    }
    public var factors: [Factor]
    public init(factors: [Factor]) { self.factors = factors }
}
