import Foundation
import HTTPTypes
import LatchkeyAPI

/// Why an email and password request was refused, as its HTTP answer.
package enum AccountError: Error, Equatable, APIErrorConvertible, CustomStringConvertible {
    case invalidEmail(String)
    case weakPassword(WeakPasswordReason)
    case emailTaken
    case emailAlreadySet
    /// An unknown address and a wrong password alike.
    case invalidCredentials
    case emailNotVerified
    case invalidCode
    /// Too many failed sign-ins for the account; `retryAfter` seconds until the oldest leaves the window.
    case tooManyAttempts(retryAfter: Int)
    /// Every password-hashing thread is busy and the queue is full.
    case busy
    /// No SMTP relay is configured, so the email routes are off.
    case emailNotConfigured

    package var apiError: APIError {
        switch self {
        case .invalidEmail(let message): return APIError(.badRequest, .invalidEmail, message)
        case .weakPassword(let reason):
            var error = APIError(.badRequest, .weakPassword, Self.message(for: reason))
            error.reason = reason.rawValue
            return error
        case .emailTaken: return APIError(.unprocessableContent, .emailTaken, "An account with this email address already exists; sign in instead.")
        case .emailAlreadySet:
            return APIError(.conflict, .emailAlreadySet, "This account already has an email address and password; change the password instead.")
        case .invalidCredentials:
            var error = APIError(.unauthorized, .invalidCredentials, "The email address or password is not right.")
            error.credentialPresented = false
            return error
        case .emailNotVerified:
            var error = APIError(
                .unauthorized, .emailNotVerified, "Please verify your email address first: use the code or link we mailed (or ask for a new one).")
            error.credentialPresented = false
            return error
        case .invalidCode:
            return APIError(
                .badRequest, .invalidCode, "This code or link is wrong, expired or already used; ask for a new one if it keeps failing.")
        case .tooManyAttempts(let seconds):
            var error = APIError(
                .tooManyRequests, .tooManyAttempts, "Too many failed sign-ins for this account; try again in \(seconds) seconds.")
            error.extraHeaders[.retryAfter] = String(seconds)
            return error
        case .busy:
            var error = APIError(.serviceUnavailable, .serviceUnavailable, "The server is busy checking passwords; try again in a moment.")
            error.extraHeaders[.retryAfter] = "1"
            return error
        case .emailNotConfigured:
            return APIError(
                .notFound, .notFound,
                "Email and password accounts are off on this server: set smtp.host (and email.from) to turn them on.")
        }
    }

    static func message(for reason: WeakPasswordReason) -> String {
        switch reason {
        case .tooShort: "The password is too short: use at least \(PasswordPolicy.minimumLength) characters."
        case .tooLong: "The password is too long: use at most \(PasswordPolicy.maximumLength) characters."
        case .sameAsEmail: "The password cannot be your email address."
        case .common: "This password is one of the most common ones; choose another."
        default: "The password is not accepted (\(reason))."
        }
    }

    package var description: String { self.apiError.description }
}

/// NIST SP 800-63B's rules for passwords people choose: 8 to 256 characters after NFKC normalisation, not the
/// account's email address, not in the list of the most common passwords. No composition rules.
enum PasswordPolicy {
    static let minimumLength = 8
    static let maximumLength = 256

    /// The password as it is hashed: NFKC-normalised (so the same password typed on two keyboards is one password).
    static func normalize(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    /// Throws ``AccountError/weakPassword(_:)`` for a normalised password that breaks a rule.
    static func check(_ normalized: String, email: EmailAddress?) throws(AccountError) {
        let length = normalized.count
        if length < Self.minimumLength { throw .weakPassword(.tooShort) }
        if length > Self.maximumLength { throw .weakPassword(.tooLong) }
        if let email {
            let lowered = normalized.lowercased()
            if lowered == email.key || lowered == email.localPart.lowercased() { throw .weakPassword(.sameAsEmail) }
        }
        if CommonPasswords.contains(normalized) { throw .weakPassword(.common) }
    }
}
