import Foundation
import LatchkeyAPI

/// Why an SDK call failed: a case a program can switch on and a ``description`` a person can read.
///
/// No case carries a token or a secret; server messages are carried as the server wrote them (they never contain one),
/// and a sign-in's errors also have the identity token, nonce, code, password and bearer it sent cut out of them.
public enum LatchkeyError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// There is no session to authenticate the request with.
    case notSignedIn
    /// The session ended for good (the refresh token was rejected, or a token without refresh expired).
    case sessionExpired
    /// The session has no refresh token (an access code or a guest token); it stays as it is.
    case notRefreshable
    /// The server answered 401 even after a refresh.
    case unauthorized(code: ErrorCode?, message: String)
    /// The server answered 429.
    case rateLimited(RateLimitInfo)
    /// The server answered 400 because the request lacked the `X-Device-ID` header.
    case missingDeviceID(message: String)
    /// No answer arrived: no connection, or the server cannot be reached.
    case offline
    /// The server failed (5xx). With code `upstream_error` (502), an identity provider (Apple's token endpoint)
    /// refused or failed; nothing was changed.
    case server(status: Int, code: ErrorCode?, message: String)
    /// The server refused the request (a 4xx no other case names: not 401, 429, 409 `identity_already_linked`, …).
    case rejected(status: Int, code: ErrorCode?, message: String)
    /// This device is already registered and the stored device secret is missing or wrong.
    case invalidDeviceSecret
    /// The access code was not accepted by the server.
    case invalidAccessCode
    /// The access code is valid but for another user than this device.
    case accessCodeForAnotherDevice
    /// The secure store cannot be used right now (e.g. the Keychain is locked); the session is not lost.
    case storeUnavailable(String)
    /// The server's answer could not be read.
    case invalidResponse
    /// A sign-in (Sign in with Apple, a token exchange) was refused with 401: the identity token or nonce was not
    /// accepted (wrong, expired, or already used). Any session in use is kept; start the sign-in over.
    case signInRejected(code: ErrorCode?, message: String)
    /// The server answered 409 `identity_already_linked`: the identity (e.g. the Apple ID) already belongs to another
    /// user. Nothing was linked or merged, and the session in use is kept.
    case identityAlreadyLinked
    /// The server answered 403 `reauthentication_required`: linking, unlinking, adding or removing an email address and
    /// deleting the account need a recent sign-in (never a session exchanged from an access code). Sign in again, then retry.
    case reauthenticationRequired
    /// The server answered 401 `unknown_device`: it knows no device with this install's device UUID, which is all an
    /// asset request carries. Register the device (``LatchkeySession/registerDevice()`` or
    /// ``LatchkeySession/registerUser()``), then retry.
    case unknownDevice
    /// The server answered 400 `invalid_key`: the object key (or asset prefix) is empty, too long, or could leave its
    /// folder (`..` or `.` segments, a leading `/`, a backslash, …). Nothing was signed; `message` says which rule.
    case invalidKey(message: String)
    /// The server answered 404 `not_found` to a storage request: it has no storage configured (for assets, no assets
    /// folder).
    case storageNotConfigured
    /// The request cannot be sent as it is (e.g. ``LatchkeySession/data(for:policy:)`` with a URL that is not absolute
    /// `http` or `https`); nothing was sent.
    case invalidRequest(String)
    /// The server answered 422 `email_taken`: another account verified this email address (only from a server that sets
    /// `email.reveal-existing`; others answer such a registration like any other).
    case emailTaken
    /// The server answered 400 `weak_password`: the password breaks the rule the reason names (too short, too long, the
    /// email address itself, or a common password).
    case weakPassword(WeakPasswordReason)
    /// The server answered 400 `invalid_email`: the address is not one mail can be sent to; `message` says why.
    case invalidEmail(message: String)
    /// The server answered 401 `invalid_credentials`: the email address and password match no account (or, changing
    /// the password, the current one is wrong). The session in use is kept.
    case invalidCredentials
    /// The server answered 401 `email_not_verified`: the password is right but the address was never verified. Verify
    /// it with the mail's code or link (``LatchkeySession/verifyEmail(code:)``), or ask for a new mail.
    case emailNotVerified
    /// The server answered 429 `too_many_attempts`: too many failed sign-ins for this account; wait `retryAfter`
    /// seconds (`nil` when the server did not say). Not the per-address ``rateLimited(_:)``.
    case tooManyAttempts(retryAfter: TimeInterval?)
    /// The server answered 400 `invalid_code`: the mail's code or link is wrong, expired, or already used.
    case invalidCode
    /// The server answered 409 `email_already_set`: this account already has an email address and password.
    case emailAlreadySet
    /// The server answered 404 `not_found` to an email and password request: it sends no mail (no SMTP configured), so
    /// email accounts are off.
    case emailNotConfigured

    /// A short sentence a person can read.
    public var description: String {
        switch self {
        case .notSignedIn: "You are not signed in."
        case .sessionExpired: "Your session has expired. Please sign in again."
        case .notRefreshable: "This session cannot be refreshed: access codes and guest tokens have no refresh token."
        case .unauthorized(_, let message): "The server did not accept your sign-in: \(message)"
        case .rateLimited(let info): "Too many requests. \(info)"
        case .missingDeviceID: "This request needs the device ID (X-Device-ID header)."
        case .offline: "Cannot reach the server. Check your connection and try again."
        case .server(let status, let code, _) where code == .upstreamError:
            "The sign-in could not be confirmed with the identity provider (HTTP \(status)). Try again."
        case .server(let status, _, _): "The server had a problem (HTTP \(status)). Try again later."
        case .rejected(_, _, let message): message
        case .invalidDeviceSecret: "This device is already registered and its device secret is missing or wrong. Sign in with an access code."
        case .invalidAccessCode: "This access code is not valid or has expired."
        case .accessCodeForAnotherDevice: "This access code belongs to another device."
        case .storeUnavailable(let reason): "Secure storage is not available right now: \(reason)."
        case .invalidResponse: "The server's answer could not be read."
        case .signInRejected(_, let message): "The sign-in was not accepted: \(message)"
        case .identityAlreadyLinked: "This sign-in already belongs to another account. Nothing was linked or merged."
        case .reauthenticationRequired: "For your security, please sign in again to do this."
        case .unknownDevice: "This device is not registered with the server yet. Register it, then try again."
        case .invalidKey(let message): "The storage key was refused: \(message)"
        case .storageNotConfigured: "This server offers no storage."
        case .invalidRequest(let reason): "This request cannot be sent: \(reason)."
        case .emailTaken: "This email address already belongs to an account. Sign in with it, or use another address."
        case .weakPassword(let reason): "This password cannot be used. \(reason.advice)"
        case .invalidEmail(let message): "This email address cannot be used: \(message)"
        case .invalidCredentials: "The email or password is not right."
        case .emailNotVerified: "Please verify your email: enter the code or open the link from the mail we sent you."
        case .tooManyAttempts(let retryAfter): "Too many failed sign-ins for this account. \(RateLimitInfo(retryAfter: retryAfter))"
        case .invalidCode: "This code or link is not valid: it is wrong, expired or already used. Ask for a new mail."
        case .emailAlreadySet: "This account already has an email address and password."
        case .emailNotConfigured: "This server does not offer email and password sign-in."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { self.description }

    /// The server's error code, when the server sent one.
    public var code: ErrorCode? {
        switch self {
        case .unauthorized(let code, _), .server(_, let code, _), .rejected(_, let code, _), .signInRejected(let code, _): code
        case .rateLimited: .rateLimited
        case .missingDeviceID: .invalidHeader
        case .invalidDeviceSecret: .invalidDeviceSecret
        case .identityAlreadyLinked: .identityAlreadyLinked
        case .reauthenticationRequired: .reauthenticationRequired
        case .unknownDevice: .unknownDevice
        case .invalidKey: .invalidKey
        case .storageNotConfigured, .emailNotConfigured: .notFound
        case .emailTaken: .emailTaken
        case .weakPassword: .weakPassword
        case .invalidEmail: .invalidEmail
        case .invalidCredentials: .invalidCredentials
        case .emailNotVerified: .emailNotVerified
        case .tooManyAttempts: .tooManyAttempts
        case .invalidCode: .invalidCode
        case .emailAlreadySet: .emailAlreadySet
        default: nil
        }
    }

    /// The error a response with status ≥ 400 stands for.
    static func from(_ response: TransportResponse, now: Date) -> LatchkeyError {
        let detail = (try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body))?.error
        let message = detail?.message ?? "HTTP \(response.status)"
        switch response.status {
        case 400 where detail?.code == .invalidHeader:
            return .missingDeviceID(message: message)
        case 400 where detail?.code == .invalidKey:
            return .invalidKey(message: message)
        case 400 where detail?.code == .weakPassword:
            return .weakPassword(WeakPasswordReason(rawValue: detail?.reason ?? ""))
        case 400 where detail?.code == .invalidEmail:
            return .invalidEmail(message: message)
        case 400 where detail?.code == .invalidCode:
            return .invalidCode
        case 401 where detail?.code == .invalidCredentials:
            return .invalidCredentials
        case 401 where detail?.code == .emailNotVerified:
            return .emailNotVerified
        case 401 where detail?.code == .unknownDevice:
            return .unknownDevice
        case 401 where detail?.code == .invalidDeviceSecret:
            return .invalidDeviceSecret
        case 401:
            return .unauthorized(code: detail?.code, message: message)
        case 409 where detail?.code == .identityAlreadyLinked:
            return .identityAlreadyLinked
        case 409 where detail?.code == .emailAlreadySet:
            return .emailAlreadySet
        case 422 where detail?.code == .emailTaken:
            return .emailTaken
        case 403 where detail?.code == .reauthenticationRequired:
            return .reauthenticationRequired
        case 429 where detail?.code == .tooManyAttempts:
            return .tooManyAttempts(retryAfter: RateLimitInfo(response: response, now: now)?.retryAfter)
        case 429:
            return .rateLimited(RateLimitInfo(response: response, now: now) ?? RateLimitInfo())
        case 500...:
            return .server(status: response.status, code: detail?.code, message: message)
        default:
            return .rejected(status: response.status, code: detail?.code, message: message)
        }
    }
}

extension LatchkeyError {
    /// This error with every occurrence of `secrets` in its server message replaced by `<redacted>`.
    ///
    /// Server messages never carry a token, but a sign-in error is built from a response to a request that carried
    /// an identity token, nonce, code or password: those are cut out in case a server (or a proxy) echoes them.
    func redacting(_ secrets: [String?]) -> LatchkeyError {
        let secrets = secrets.compactMap { $0 }.filter { !$0.isEmpty }
        func clean(_ message: String) -> String {
            secrets.reduce(message) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
        }
        switch self {
        case .unauthorized(let code, let message): return .unauthorized(code: code, message: clean(message))
        case .signInRejected(let code, let message): return .signInRejected(code: code, message: clean(message))
        case .server(let status, let code, let message): return .server(status: status, code: code, message: clean(message))
        case .rejected(let status, let code, let message): return .rejected(status: status, code: code, message: clean(message))
        case .missingDeviceID(let message): return .missingDeviceID(message: clean(message))
        case .invalidEmail(let message): return .invalidEmail(message: clean(message))
        default: return self
        }
    }
}

extension SecureStoreError {
    var latchkeyError: LatchkeyError {
        switch self {
        case .unavailable(let reason): .storeUnavailable(reason)
        case .corrupt: .storeUnavailable("the stored credentials could not be read; they are kept as they are")
        case .misconfigured(let reason): .storeUnavailable(reason)
        case .failed(let reason): .storeUnavailable(reason)
        }
    }
}
