#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `POST /api/v1/auth/register`: an email address and a password for a new user, or (with a device session's Bearer)
/// for the user of that session.
public struct EmailRegistrationRequest: Codable, Sendable {
    public var email: String
    public var password: String
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// An account's email address and whether it was verified: the answer to `POST /api/v1/auth/register` (201) and
/// `POST /api/v1/auth/verify-email` (200).
public struct EmailAccountResponse: Codable, Sendable, Equatable {
    public var userID: String
    /// The address as stored: trimmed, its domain lowercased and in ASCII (IDNA punycode).
    public var email: String
    public var emailVerified: Bool
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case email
        case emailVerified = "email_verified"
    }
    public init(userID: String, email: String, emailVerified: Bool) {
        self.userID = userID
        self.email = email
        self.emailVerified = emailVerified
    }
}

/// `POST /api/v1/auth/verify-email`: the address and the 6-digit code from the verification mail, or the link token
/// from the mail's link instead of both.
public struct VerifyEmailRequest: Codable, Sendable {
    public var email: String?
    public var code: String?
    public var token: String?
    public init(email: String, code: String) {
        self.email = email
        self.code = code
        self.token = nil
    }
    public init(token: String) {
        self.email = nil
        self.code = nil
        self.token = token
    }
}

/// `POST /api/v1/auth/resend-verification` and `POST /api/v1/auth/reset-password`: an address to mail.
public struct EmailAddressRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// The 202 answer to `resend-verification` and `reset-password`: the same whether or not the address has an account.
public struct MailAcceptedResponse: Codable, Sendable, Equatable {
    public var message: String
    public init(message: String) { self.message = message }
}

/// `POST /api/v1/auth/login`.
public struct PasswordLoginRequest: Codable, Sendable {
    public var email: String
    public var password: String
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// `POST /api/v1/auth/reset-password/confirm`: the link token from the reset mail, or the address and the mail's
/// 6-digit code, and the new password.
public struct ResetPasswordConfirmRequest: Codable, Sendable {
    public var token: String?
    public var email: String?
    public var code: String?
    public var newPassword: String
    enum CodingKeys: String, CodingKey {
        case token, email, code
        case newPassword = "new_password"
    }
    public init(token: String, newPassword: String) {
        self.token = token
        self.email = nil
        self.code = nil
        self.newPassword = newPassword
    }
    public init(email: String, code: String, newPassword: String) {
        self.token = nil
        self.email = email
        self.code = code
        self.newPassword = newPassword
    }
}

/// `POST /api/v1/auth/change-password` (with the session's Bearer).
public struct ChangePasswordRequest: Codable, Sendable {
    public var currentPassword: String
    public var newPassword: String
    enum CodingKeys: String, CodingKey {
        case currentPassword = "current_password"
        case newPassword = "new_password"
    }
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// The answer to a password reset or change: whose password changed and how many sessions and devices it ended.
public struct PasswordChangedResponse: Codable, Sendable, Equatable {
    public var userID: String
    /// Sessions revoked: every session of the user after a reset, every other session after a change.
    public var revokedSessions: Int
    /// Devices signed out: their secrets and bound keys stopped working (every device of the user but the one that
    /// proved its key in the request); absent from older servers.
    public var revokedDevices: Int?
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case revokedSessions = "revoked_sessions"
        case revokedDevices = "revoked_devices"
    }
    public init(userID: String, revokedSessions: Int, revokedDevices: Int? = nil) {
        self.userID = userID
        self.revokedSessions = revokedSessions
        self.revokedDevices = revokedDevices
    }
}

/// The answer to `DELETE /api/v1/users/me/email`: the address removed and how many other sessions it ended.
public struct EmailRemovedResponse: Codable, Sendable, Equatable {
    public var userID: String
    public var email: String
    /// Sessions revoked: every session of the user but the one that asked.
    public var revokedSessions: Int
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case email
        case revokedSessions = "revoked_sessions"
    }
    public init(userID: String, email: String, revokedSessions: Int) {
        self.userID = userID
        self.email = email
        self.revokedSessions = revokedSessions
    }
}

extension ErrorCode {
    /// 400: the password breaks a rule; the envelope's `reason` says which (`too_short`, `too_long`, `same_as_email`,
    /// `common`).
    public static let weakPassword = ErrorCode(rawValue: "weak_password")
    /// 400: the email address is not a valid addr-spec (or its domain is not a valid host name).
    public static let invalidEmail = ErrorCode(rawValue: "invalid_email")
    /// 422: another account already uses (and has verified) this email address; only where the server sets
    /// `email.reveal-existing` (otherwise such a registration answers 201 like any other and the owner is mailed).
    public static let emailTaken = ErrorCode(rawValue: "email_taken")
    /// 409: this account already has an email address and password.
    public static let emailAlreadySet = ErrorCode(rawValue: "email_already_set")
    /// 401: the email address and password do not match an account (the same answer for an unknown address).
    public static let invalidCredentials = ErrorCode(rawValue: "invalid_credentials")
    /// 401: the password matched, but the address was never verified.
    public static let emailNotVerified = ErrorCode(rawValue: "email_not_verified")
    /// 400: the code or link is wrong, expired, already used, or was spent by too many wrong tries.
    public static let invalidCode = ErrorCode(rawValue: "invalid_code")
    /// 429: too many failed sign-ins for this account; see `Retry-After`.
    public static let tooManyAttempts = ErrorCode(rawValue: "too_many_attempts")
}

/// Why a password was refused (`weak_password`'s `reason`).
/// Encoded as the bare string (the standard library's coding of a `RawRepresentable` with a `String` raw value).
public struct WeakPasswordReason: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { self.rawValue }

    /// Fewer than 8 characters (after NFKC normalisation).
    public static let tooShort = WeakPasswordReason(rawValue: "too_short")
    /// More than 256 characters (after NFKC normalisation).
    public static let tooLong = WeakPasswordReason(rawValue: "too_long")
    /// The password is the account's email address (or its local part).
    public static let sameAsEmail = WeakPasswordReason(rawValue: "same_as_email")
    /// The password is in the list of the most common passwords.
    public static let common = WeakPasswordReason(rawValue: "common")
}
