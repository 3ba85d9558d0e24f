import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why an SDK call failed: a small, stable set of categories an app branches on, each carrying what it needs.
///
/// The categories do not grow when the server does: a new refusal arrives as ``rejected(_:)`` with its
/// ``Details/code``, so a `switch` over the categories keeps compiling and keeps meaning what it meant. The one
/// category added since is ``mfaRequired(_:)``: a sign-in that needs a second factor is not a refusal but a step, and
/// carries what finishing it needs.
///
/// ```swift
/// do { try await session.signIn(email: email, password: password) } catch let error as LatchkeyError {
///     switch error {
///     case .offline: showOfflineBanner()
///     case .rateLimited(let info): show("Slow down. \(info)")
///     case .rejected(let details) where details.code == .invalidCredentials: show(error.localizedDescription)
///     case .rejected, .server: show(error.localizedDescription)
///     default: show(error.localizedDescription)
///     }
/// }
/// ```
///
/// No case carries a token or a secret; server messages are carried as the server wrote them (they never contain one),
/// and a sign-in's errors also have the identity token, nonce, code, password and bearer it sent cut out of them.
/// ``description`` (and `localizedDescription`) is a sentence for a person, from the SDK's string catalog
/// (`Localizable.xcstrings`, keys `error.*`; see <doc:ErrorMessages>).
public enum LatchkeyError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// There is no session to authenticate the request with (never signed in, signed out, or the session changed while
    /// the request waited and it was not sent again).
    case notSignedIn
    /// The session ended for good (the refresh token was rejected, or a token without refresh expired): sign in again.
    case sessionExpired
    /// No answer arrived: no connection, the host cannot be found or reached, or the request timed out. The platform's
    /// code says which (`.notConnectedToInternet`, `.timedOut`, `.cannotConnectToHost`, …).
    case offline(URLError.Code)
    /// The platform refused to make the connection, and trying again will not help: App Transport Security blocked it,
    /// the server's certificate is not trusted, or the URL cannot be loaded. The platform's code says which
    /// (`.appTransportSecurityRequiresSecureConnection`, `.serverCertificateUntrusted`, `.badURL`, …).
    case connectionRefused(URLError.Code)
    /// The server answered 429: too many requests; ``RateLimitInfo/retryAfter`` says for how long.
    case rateLimited(RateLimitInfo)
    /// A sign-in proved its first factor, and the user has a second one (403 `mfa_required`): no session started, and the
    /// one in use is kept. Ask for a code and finish with ``LatchkeySession/completeSignIn(_:code:)`` or
    /// ``LatchkeySession/completeSignIn(_:recoveryCode:)``. Thrown by ``LatchkeySession/signIn(email:password:)``,
    /// `signInWithApple`, ``LatchkeySession/exchangeExternalToken(_:)``, and a passkey sign-in whose authenticator did not
    /// verify the person (``LatchkeySession/finishPasskeySignIn(_:)``, `signInWithPasskey`).
    case mfaRequired(MFAChallenge)
    /// The request was refused: the server answered 4xx (401 after a refresh, 403, 404, 409, …), or the SDK refused an
    /// answer for the request's purpose (an access code for another device). ``Details/code`` says which refusal.
    case rejected(Details)
    /// The server failed (5xx; code `upstream_error` when an identity provider did), or its answer could not be read
    /// (code `invalid_response`). Nothing the app did wrong; try again later.
    case server(Details)
    /// The secure store (Keychain) cannot be used right now; the session is not lost. The problem says whether it heals
    /// by itself (``StoreProblem/locked``) or needs the app (``StoreProblem/unreadable``,
    /// ``StoreProblem/misconfigured(_:)``).
    case storeUnavailable(StoreProblem)
    /// The request cannot be sent as it is, and nothing was sent: the reason says why (a URL that is not absolute `http`
    /// or `https`, credentials for a host the configuration does not allow, …). A programming error.
    case invalidRequest(String)

    /// What a refusal or a failure carries: the HTTP status, the error code, and the server's message.
    public struct Details: Sendable, Equatable {
        /// The HTTP status; `nil` when the SDK refused without an answer from the server.
        public var status: Int?
        /// The server's error code (`invalid_credentials`, `weak_password`, …), or one of the SDK's own
        /// (`access_code_for_another_device`, `invalid_response`, …; the `ErrorCode` constants this module adds).
        public var code: ErrorCode?
        /// The server's message as it wrote it (never a token or secret), or the SDK's own English sentence.
        public var message: String
        /// For `weak_password`, which rule the password broke.
        public var weakPasswordReason: WeakPasswordReason?
        /// For `too_many_attempts`, how many seconds to wait, when the server said.
        public var retryAfter: TimeInterval?

        /// Creates details.
        public init(
            status: Int? = nil, code: ErrorCode? = nil, message: String, weakPasswordReason: WeakPasswordReason? = nil,
            retryAfter: TimeInterval? = nil
        ) {
            self.status = status
            self.code = code
            self.message = message
            self.weakPasswordReason = weakPasswordReason
            self.retryAfter = retryAfter
        }
    }

    /// The error code: the server's, one of the SDK's own, or the category's (`rate_limited`); `nil` for the categories
    /// that have none.
    public var code: ErrorCode? {
        switch self {
        case .rejected(let details), .server(let details): details.code
        case .rateLimited: .rateLimited
        case .mfaRequired: .mfaRequired
        case .invalidRequest: .invalidRequest
        default: nil
        }
    }

    /// The details of ``rejected(_:)`` and ``server(_:)``.
    public var details: Details? {
        switch self {
        case .rejected(let details), .server(let details): details
        default: nil
        }
    }

    /// A sentence a person can read, in the user's language where the app's bundle has it.
    public var description: String { ErrorMessages.sentence(for: self) }

    /// Same as ``description``.
    public var errorDescription: String? { self.description }
}

extension LatchkeyError {
    /// A refusal with `code`, as the SDK builds it (no answer behind it unless `status` is given).
    static func rejected(_ code: ErrorCode, status: Int? = nil, message: String? = nil) -> LatchkeyError {
        .rejected(Details(status: status, code: code, message: message ?? ErrorMessages.english(code)))
    }

    /// The server's answer could not be read.
    static let invalidResponse = LatchkeyError.server(Details(code: .invalidResponse, message: "The server's answer could not be read."))

    /// Whether this is a refusal (or a failure) with `code`.
    func has(_ code: ErrorCode) -> Bool { self.code == code }

    /// Whether the session (or the provider's token) is not accepted any more: no session, one that expired, or a 401.
    var refusesSession: Bool {
        switch self {
        case .notSignedIn, .sessionExpired: true
        case .rejected(let details): details.status == 401
        default: false
        }
    }

    /// Whether the server answered 404 `not_found`: it has no such route (a feature it is not configured for).
    var isNotFound: Bool { self.details?.status == 404 && self.has(.notFound) }

    /// The error a response with status ≥ 400 stands for.
    static func from(_ response: TransportResponse, now: Date) -> LatchkeyError {
        let detail = (try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body))?.error
        if response.status == 403, detail?.code == .mfaRequired,
            let required = try? JSONDecoder().decode(MFARequiredResponse.self, from: response.body)
        {
            return .mfaRequired(MFAChallenge(required))
        }
        var details = Details(status: response.status, code: detail?.code, message: detail?.message ?? "HTTP \(response.status)")
        switch response.status {
        case 429 where detail?.code == .tooManyAttempts:
            details.retryAfter = RateLimitInfo(response: response, now: now)?.retryAfter
            return .rejected(details)
        case 429:
            return .rateLimited(RateLimitInfo(response: response, now: now) ?? RateLimitInfo())
        case 500...:
            return .server(details)
        default:
            if detail?.code == .weakPassword { details.weakPasswordReason = WeakPasswordReason(rawValue: detail?.reason ?? "") }
            return .rejected(details)
        }
    }

    /// This error with every occurrence of `secrets` in its server message replaced by `<redacted>`.
    ///
    /// Server messages never carry a token, but a sign-in error is built from a response to a request that carried
    /// an identity token, nonce, code or password: those are cut out in case a server (or a proxy) echoes them.
    func redacting(_ secrets: [String?]) -> LatchkeyError {
        let secrets = secrets.compactMap { $0 }.filter { !$0.isEmpty }
        func clean(_ details: Details) -> Details {
            var details = details
            details.message = secrets.reduce(details.message) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
            return details
        }
        switch self {
        case .rejected(let details): return .rejected(clean(details))
        case .server(let details): return .server(clean(details))
        default: return self
        }
    }

    /// A transport's failure: no answer (``offline(_:)``) or a connection the platform refused
    /// (``connectionRefused(_:)``), keeping the platform's code.
    static func transport(_ error: URLError) -> LatchkeyError {
        switch error.code {
        case .appTransportSecurityRequiresSecureConnection, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired,
            .secureConnectionFailed, .badURL, .unsupportedURL, .userAuthenticationRequired, .cannotDecodeRawData,
            .cannotDecodeContentData, .cannotParseResponse, .badServerResponse, .httpTooManyRedirects, .redirectToNonExistentLocation,
            .zeroByteResource, .dataLengthExceedsMaximum, .fileDoesNotExist, .noPermissionsToReadFile:
            .connectionRefused(error.code)
        default:
            .offline(error.code)
        }
    }
}

extension SecureStoreError {
    /// The error the session reports for this store failure.
    var latchkeyError: LatchkeyError { .storeUnavailable(self.problem) }
}

extension ErrorCode {
    /// The SDK's own: the session has no refresh token (an access code or a guest token); it stays as it is.
    public static let notRefreshable = ErrorCode(rawValue: "not_refreshable")
    /// The SDK's own: the server did not accept the access code (401 to the exchange).
    public static let invalidAccessCode = ErrorCode(rawValue: "invalid_access_code")
    /// The SDK's own: the access code is valid but for another user than this device (the Stori rule,
    /// `Configuration.requireAccessCodeForThisDevice`).
    public static let accessCodeForAnotherDevice = ErrorCode(rawValue: "access_code_for_another_device")
    /// The SDK's own: a sign-in (Sign in with Apple, a token exchange) was refused with 401 — the identity token or nonce
    /// was not accepted (wrong, expired, already used). Any session in use is kept; start the sign-in over.
    public static let signInRejected = ErrorCode(rawValue: "sign_in_rejected")
    /// The SDK's own: the server answered 404 to a storage request; it has no storage configured (for assets, no
    /// assets folder).
    public static let storageNotConfigured = ErrorCode(rawValue: "storage_not_configured")
    /// The SDK's own: the server answered 404 to an email and password request; it sends no mail (no SMTP configured),
    /// so email accounts are off.
    public static let emailNotConfigured = ErrorCode(rawValue: "email_not_configured")
    /// The SDK's own: the server's answer could not be read.
    public static let invalidResponse = ErrorCode(rawValue: "invalid_response")
}
