import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOHTTP1

/// An error answered with the envelope `{"error": {"code", "message"}}` and its status.
///
/// 401s carry `WWW-Authenticate: Bearer` (RFC 6750), with `error="invalid_token"` when a credential was
/// presented. Messages never include tokens or secrets.
public struct APIError: HTTPResponseError, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: ErrorCode
    public let message: String
    /// A body other than the plain envelope (validate-token answers `{"valid": false, "error": …}`).
    var body: (any Encodable & Sendable)?
    var credentialPresented = true
    /// Headers the response carries besides the content type (rate-limit headers).
    var extraHeaders: HTTPFields = [:]
    /// Which rule was broken, for codes that say (`weak_password`): the envelope's `reason`.
    var reason: String?

    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.status.code) \(self.code): \(self.message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let envelope = ErrorEnvelope(code: self.code, message: self.message, reason: self.reason)
        let data = try self.body.map { try encoder.encode($0) } ?? encoder.encode(envelope)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if self.status == .unauthorized {
            headers[.wwwAuthenticate] =
                self.credentialPresented
                ? #"Bearer realm="latchkey", error="invalid_token", error_description="\#(self.message.replacingOccurrences(of: "\"", with: "'"))""#
                : #"Bearer realm="latchkey""#
        }
        headers.append(contentsOf: self.extraHeaders)
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func badRequest(_ message: String, code: ErrorCode = .invalidRequest) -> APIError { APIError(.badRequest, code, message) }

    static func invalidToken(_ message: String) -> APIError { APIError(.unauthorized, .invalidToken, message) }

    static var missingToken: APIError {
        var error = APIError(.unauthorized, .invalidToken, "This endpoint needs an access token: send Authorization: Bearer <token>.")
        error.credentialPresented = false
        return error
    }

    static func unavailable() -> APIError {
        APIError(.serviceUnavailable, .serviceUnavailable, "The database is not answering; try again shortly.")
    }
}

extension APIError {
    /// The HTTP form of an error thrown below the routes.
    static func translating(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError: return error
        case let error as any APIErrorConvertible: return error.apiError
        case let rejection as TokenRejection: return .invalidToken(rejection.description)
        case let error as ServiceError: return APIError(error)
        case StoreError.unavailable: return .unavailable()
        // NIO's parser refused the bytes (a malformed chunk size while a route reads the body): the client's mistake.
        case let error as HTTPParserError:
            var refusal = APIError.badRequest("The request is not well-formed HTTP/1.1 (\(error)); the connection is closed.")
            refusal.extraHeaders[.connection] = "close"
            return refusal
        // Hummingbird's own errors: HTTPError, and NIO's NIOTooManyBytesError (a body over `maxUploadSize`).
        case let error as any HTTPResponseError:
            switch error.status {
            case .notFound: return APIError(.notFound, .notFound, "No such endpoint.")
            case .methodNotAllowed: return APIError(.methodNotAllowed, .methodNotAllowed, "This method is not allowed on this endpoint.")
            case .contentTooLarge: return APIError(.contentTooLarge, .payloadTooLarge, "The request body is too large.")
            case .unauthorized: return .missingToken
            default:
                let code: ErrorCode = error.status.code < 500 ? .invalidRequest : .internalError
                return APIError(error.status, code, error.status.reasonPhrase)
            }
        default: return nil
        }
    }
}

extension APIError {
    /// The HTTP answer of a ``ServiceError``: every kind's status, code and headers, in this one place.
    init(_ error: ServiceError) {
        let (status, code): (HTTPResponse.Status, ErrorCode) =
            switch error.kind {
            case .invalidGrant: (.unauthorized, .invalidGrant)
            case .invalidDeviceSecret: (.unauthorized, .invalidDeviceSecret)
            case .forbidden: (.forbidden, .forbidden)
            case .notFound: (.notFound, .notFound)
            case .budgetExhausted: (.tooManyRequests, .budgetExhausted)
            case .identityAlreadyLinked: (.conflict, .identityAlreadyLinked)
            case .upstream: (.badGateway, .upstreamError)
            case .reauthenticationRequired: (.forbidden, .reauthenticationRequired)
            case .deviceIDClaimed: (.conflict, .deviceIDClaimed)
            case .userDeleted: (.conflict, .userDeleted)
            case .lastSignInMethod: (.conflict, .lastSignInMethod)
            case .invalidRequest: (.badRequest, error.code ?? .invalidRequest)
            case .invalidEmail: (.badRequest, .invalidEmail)
            case .weakPassword: (.badRequest, .weakPassword)
            case .emailTaken: (.unprocessableContent, .emailTaken)
            case .emailAlreadySet: (.conflict, .emailAlreadySet)
            case .invalidCredentials: (.unauthorized, .invalidCredentials)
            case .emailNotVerified: (.unauthorized, .emailNotVerified)
            case .invalidCode: (.badRequest, .invalidCode)
            case .tooManyAttempts: (.tooManyRequests, .tooManyAttempts)
            case .busy: (.serviceUnavailable, .serviceUnavailable)
            case .emailNotConfigured: (.notFound, .notFound)
            case .invalidMFAToken: (.unauthorized, .invalidMFAToken)
            case .aal2Required: (.forbidden, .aal2Required)
            case .factorExists: (.conflict, .factorExists)
            case .passkeysDisabled: (.notFound, .passkeysDisabled)
            case .invalidPasskey: (.badRequest, .invalidPasskey)
            case .unknownCredential: (.unauthorized, .unknownCredential)
            case .passkeyExists: (.conflict, .passkeyExists)
            case .userDisabled: (.forbidden, .userDisabled)
            case .claimsHookFailed: (.serviceUnavailable, .serviceUnavailable)
            default: (.internalServerError, .internalError)
            }
        self.init(status, code, error.message)
        self.reason = error.reason
        if let seconds = error.retryAfter { self.extraHeaders[.retryAfter] = String(seconds) }
        // A refused password or an unverified address is not a refused token: no error="invalid_token".
        if [.invalidCredentials, .emailNotVerified, .invalidMFAToken, .unknownCredential].contains(error.kind) {
            self.credentialPresented = false
        }
    }
}

/// An error of a feature that knows its HTTP answer (a DPoP proof refused, a rate limit reached); the features
/// declare the conformance, so this folder needs to know none of them.
package protocol APIErrorConvertible: Error {
    var apiError: APIError { get }
}
