import Foundation
import LatchkeyAPI

/// The sentences errors show a person: English here, translations in the module's string catalog
/// (`Resources/Localizable.xcstrings`, which holds every key of ``english`` with the same English value; a test keeps
/// the two equal).
///
/// A key is `error.<category>` for a category without a code, `error.<code>` for a refusal or failure whose code the
/// SDK knows, and `store.<problem>`, `weak_password.<reason>`, `rate_limit.<unit>` for the parts some sentences are built
/// from. `%@` stands for the server's message, a rate-limit sentence or a reason; `%lld` for a number.
enum ErrorMessages {
    /// Every key and its English sentence.
    static let english: [String: String] = [
        "error.not_signed_in": "You are not signed in.",
        "error.session_expired": "Your session has expired. Please sign in again.",
        "error.offline": "Cannot reach the server. Check your connection and try again.",
        "error.connection_refused": "This device refused to connect to the server securely (URL error %lld).",
        "error.rate_limited": "Too many requests. %@",
        "error.invalid_request": "This request cannot be sent: %@.",
        "error.server": "The server had a problem (HTTP %lld). Try again later.",
        "error.unauthorized": "The server did not accept your sign-in: %@",
        "error.upstream_error": "The sign-in could not be confirmed with the identity provider. Try again.",
        "error.invalid_response": "The server's answer could not be read.",
        "error.not_refreshable": "This session cannot be refreshed: access codes and guest tokens have no refresh token.",
        "error.invalid_header": "This request needs the device ID (X-Device-ID header).",
        "error.invalid_device_secret":
            "This device is already registered and its device secret is missing or wrong. Sign in with an access code.",
        "error.invalid_access_code": "This access code is not valid or has expired.",
        "error.access_code_for_another_device": "This access code belongs to another device.",
        "error.sign_in_rejected": "The sign-in was not accepted: %@",
        "error.identity_already_linked": "This sign-in already belongs to another account. Nothing was linked or merged.",
        "error.reauthentication_required": "For your security, please sign in again to do this.",
        "error.unknown_device": "This device is not registered with the server yet. Register it, then try again.",
        "error.invalid_key": "The storage key was refused: %@",
        "error.storage_not_configured": "This server offers no storage.",
        "error.email_taken": "This email address already belongs to an account. Sign in with it, or use another address.",
        "error.weak_password": "This password cannot be used. %@",
        "error.invalid_email": "This email address cannot be used: %@",
        "error.invalid_credentials": "The email or password is not right.",
        "error.email_not_verified": "Please verify your email: enter the code or open the link from the mail we sent you.",
        "error.too_many_attempts": "Too many failed sign-ins for this account. %@",
        "error.invalid_code": "This code or link is not valid: it is wrong, expired or already used.",
        "error.email_already_set": "This account already has an email address and password.",
        "error.email_not_configured": "This server does not offer email and password sign-in.",
        "error.mfa_required": "Enter the code from your authenticator app, or a recovery code, to finish signing in.",
        "error.invalid_mfa_token": "This sign-in has expired or had too many wrong codes. Please sign in again.",
        "error.aal2_required": "For your security, enter the code from your authenticator app to do this.",
        "error.factor_exists": "This account already has an authenticator app. Remove it before adding another.",
        "error.passkeys_disabled": "This server does not offer passkeys.",
        "error.invalid_passkey": "The passkey could not be verified. Please try again.",
        "error.unknown_credential": "This passkey does not belong to an account here; it may have been removed. Sign in another way.",
        "error.passkey_exists": "This passkey is already registered.",
        "error.passkey_cancelled": "The passkey request was cancelled.",
        "error.no_passkey_credentials": "There is no passkey for this app on this device. Sign in another way.",
        "error.passkey_not_associated": "Passkeys are not set up for this app yet: it is not associated with the server's domain.",
        "error.invalid_attestation": "This app could not prove it is a genuine copy on this device. Update the app, or try again later.",
        "error.invalid_challenge": "The app's security check expired before it finished. Please try again.",
        "error.invalid_assertion": "This device could not prove it is the one this app registered. Please try again.",
        "error.attestation_required": "This server only accepts the app on a genuine Apple device; this device could not prove it.",
        "store.locked": "Secure storage is locked until this device is unlocked. Your session is kept.",
        "store.unreadable": "The stored sign-in could not be read. It is kept as it is.",
        "store.misconfigured": "Secure storage is not set up for this app: %@.",
        "store.failed": "Secure storage failed: %@.",
        "weak_password.too_short": "Use at least 8 characters.",
        "weak_password.too_long": "Use at most 256 characters.",
        "weak_password.same_as_email": "Do not use your email address as your password.",
        "weak_password.common": "It is one of the most common passwords: choose one that is harder to guess.",
        "weak_password.other": "Choose a longer password that is harder to guess.",
        "rate_limit.later": "Try again later.",
        "rate_limit.second": "Try again in 1 second.",
        "rate_limit.seconds": "Try again in %lld seconds.",
        "rate_limit.minute": "Try again in 1 minute.",
        "rate_limit.minutes": "Try again in %lld minutes.",
        "rate_limit.hours": "Try again in %lld hours.",
    ]

    /// The sentence for `key`: the app's language from the catalog where the bundle has one, else English.
    static func text(_ key: String) -> String {
        let english = Self.english[key] ?? key
        #if canImport(Darwin)
        return Bundle.module.localizedString(forKey: key, value: english, table: nil)
        #else
        return english  // FoundationNetworking platforms copy the catalog uncompiled: English
        #endif
    }

    /// The sentence for `key` with its `%@` filled with `argument`.
    static func text(_ key: String, _ argument: String) -> String {
        Self.text(key).replacingOccurrences(of: "%@", with: argument)
    }

    /// The sentence for `key` with its `%lld` filled with `number`.
    static func text(_ key: String, _ number: Int) -> String {
        Self.text(key).replacingOccurrences(of: "%lld", with: String(number))
    }

    /// The English sentence of an SDK code, for ``LatchkeyError/Details/message``.
    static func english(_ code: ErrorCode) -> String {
        Self.english["error." + code.rawValue] ?? code.rawValue
    }

    /// The sentence ``LatchkeyError/description`` shows.
    static func sentence(for error: LatchkeyError) -> String {
        switch error {
        case .notSignedIn: return Self.text("error.not_signed_in")
        case .sessionExpired: return Self.text("error.session_expired")
        case .offline: return Self.text("error.offline")
        case .connectionRefused(let code): return Self.text("error.connection_refused", code.rawValue)
        case .rateLimited(let info): return Self.text("error.rate_limited", info.description)
        case .mfaRequired: return Self.text("error.mfa_required")
        case .invalidRequest(let reason): return Self.text("error.invalid_request", reason)
        case .storeUnavailable(let problem): return problem.description
        case .server(let details):
            if let code = details.code, code == .upstreamError || code == .invalidResponse { return Self.text("error." + code.rawValue) }
            return Self.text("error.server", details.status ?? 500)
        case .rejected(let details): return Self.sentence(forRefusal: details)
        }
    }

    private static func sentence(forRefusal details: LatchkeyError.Details) -> String {
        guard let code = details.code else { return details.message }
        switch code {
        case .weakPassword: return Self.text("error.weak_password", Self.advice(details.weakPasswordReason))
        case .tooManyAttempts: return Self.text("error.too_many_attempts", RateLimitInfo(retryAfter: details.retryAfter).description)
        case .invalidKey, .invalidEmail, .signInRejected: return Self.text("error." + code.rawValue, details.message)
        default:
            if Self.english["error." + code.rawValue] != nil, code != .invalidRequest { return Self.text("error." + code.rawValue) }
            return details.status == 401 ? Self.text("error.unauthorized", details.message) : details.message
        }
    }

    /// What to do about a weak password.
    static func advice(_ reason: WeakPasswordReason?) -> String {
        switch reason {
        case .tooShort: Self.text("weak_password.too_short")
        case .tooLong: Self.text("weak_password.too_long")
        case .sameAsEmail: Self.text("weak_password.same_as_email")
        case .common: Self.text("weak_password.common")
        default: Self.text("weak_password.other")
        }
    }
}
