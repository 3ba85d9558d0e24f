#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A machine-matchable error code carried in every error response.
///
/// Codes are open-ended strings so a newer server can add codes without breaking older clients.
public struct ErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { self.rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }
    public var description: String { self.rawValue }

    /// The body was not valid JSON, or a field had the wrong type or was missing.
    public static let invalidRequest = ErrorCode(rawValue: "invalid_request")
    /// A field that must be a UUID was not one.
    public static let invalidUUID = ErrorCode(rawValue: "invalid_uuid")
    /// A required header was missing or malformed.
    public static let invalidHeader = ErrorCode(rawValue: "invalid_header")
    /// The request body exceeded the server's limit.
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    /// 408: the request head did not arrive within the server's `http.header-timeout`; the connection is closed.
    public static let requestTimeout = ErrorCode(rawValue: "request_timeout")
    /// The bearer token was missing, malformed, forged, expired or revoked.
    public static let invalidToken = ErrorCode(rawValue: "invalid_token")
    /// The refresh token is unknown, expired, revoked or was reused.
    public static let invalidGrant = ErrorCode(rawValue: "invalid_grant")
    /// The device is already registered and the request did not prove ownership with its device secret.
    public static let invalidDeviceSecret = ErrorCode(rawValue: "invalid_device_secret")
    /// The token is valid but of a kind this endpoint does not accept.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// The resource does not exist.
    public static let notFound = ErrorCode(rawValue: "not_found")
    /// The HTTP method is not supported on this path.
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")
    /// 409: the identity (e.g. an Apple ID) already belongs to another user; nothing was merged.
    public static let identityAlreadyLinked = ErrorCode(rawValue: "identity_already_linked")
    /// 502: an identity provider (Apple's token or revoke endpoint) refused or failed; nothing was changed.
    public static let upstreamError = ErrorCode(rawValue: "upstream_error")
    /// 400: the DPoP proof (RFC 9449) is missing where required, malformed, or does not match the request or key.
    public static let invalidDPoPProof = ErrorCode(rawValue: "invalid_dpop_proof")
    /// 400: send the DPoP proof again with the nonce from the `DPoP-Nonce` response header (RFC 9449 §8).
    public static let useDPoPNonce = ErrorCode(rawValue: "use_dpop_nonce")
    /// 403: linking, unlinking or deleting the account needs a recent sign-in (or a fresh DPoP proof).
    public static let reauthenticationRequired = ErrorCode(rawValue: "reauthentication_required")
    /// 409: the device ID was claimed through `users/register`; a new install should use a new device ID.
    public static let deviceIDClaimed = ErrorCode(rawValue: "device_id_claimed")
    /// 403: the user is disabled (by the app's backend or support): no sign-in or refresh until they are enabled.
    public static let userDisabled = ErrorCode(rawValue: "user_disabled")
    /// 409: the user with this ID was deleted; the ID cannot be registered again.
    public static let userDeleted = ErrorCode(rawValue: "user_deleted")
    /// 409: unlinking this identity would leave the account with no way to sign in.
    public static let lastSignInMethod = ErrorCode(rawValue: "last_sign_in_method")
    /// 401: the `X-Device-ID` names no device Latchkey knows (register it first).
    public static let unknownDevice = ErrorCode(rawValue: "unknown_device")
    /// 400: an object key would leave the allowed prefix, or is empty, too long or has control characters.
    public static let invalidKey = ErrorCode(rawValue: "invalid_key")
    /// Too many requests; see the rate-limit headers.
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    /// The user's budget is used up for the current period.
    public static let budgetExhausted = ErrorCode(rawValue: "budget_exhausted")
    /// A dependency (the database) is not answering.
    public static let serviceUnavailable = ErrorCode(rawValue: "service_unavailable")
    /// An unexpected server failure. Never caused by client input.
    public static let internalError = ErrorCode(rawValue: "internal_error")
}

/// The body of every error response: `{"error": {"code": "…", "message": "…"}}`.
public struct ErrorEnvelope: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        /// A stable code a program can match.
        public var code: ErrorCode
        /// A short sentence a person can read. Never contains a token or secret.
        public var message: String
        /// For some codes, which rule was broken (`weak_password`: a ``WeakPasswordReason``); absent otherwise.
        public var reason: String?
        public init(code: ErrorCode, message: String, reason: String? = nil) {
            self.code = code
            self.message = message
            self.reason = reason
        }
    }
    public var error: Detail
    public init(code: ErrorCode, message: String, reason: String? = nil) {
        self.error = Detail(code: code, message: message, reason: reason)
    }
}
