import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// An error answered with the envelope `{"error": {"code", "message"}}` and its status.
///
/// 401s carry `WWW-Authenticate: Bearer` (RFC 6750), with `error="invalid_token"` when a credential was
/// presented. Messages never include tokens or secrets.
@available(LatchkeyServer 1.0, *)
public struct APIError: HTTPResponseError, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: ErrorCode
    public let message: String
    /// A body other than the plain envelope (validate-token answers `{"valid": false, "error": …}`).
    var body: (any Encodable & Sendable)?
    var credentialPresented = true
    /// Headers the response carries besides the content type (rate-limit headers).
    var extraHeaders: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.status.code) \(self.code): \(self.message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try self.body.map { try encoder.encode($0) } ?? encoder.encode(ErrorEnvelope(code: self.code, message: self.message))
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

@available(LatchkeyServer 1.0, *)
extension APIError {
    /// The HTTP form of an error thrown below the routes.
    static func translating(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError: return error
        case let rejection as TokenRejection: return .invalidToken(rejection.description)
        case let error as ServiceError:
            switch error {
            case .invalidGrant(let message): return APIError(.unauthorized, .invalidGrant, message)
            case .invalidDeviceSecret: return APIError(.unauthorized, .invalidDeviceSecret, error.description)
            case .forbidden(let message): return APIError(.forbidden, .forbidden, message)
            case .notFound(let message): return APIError(.notFound, .notFound, message)
            case .budgetExhausted: return APIError(.tooManyRequests, .budgetExhausted, error.description)
            case .identityAlreadyLinked: return APIError(.conflict, .identityAlreadyLinked, error.description)
            case .upstream(let message): return APIError(.badGateway, .upstreamError, message)
            case .reauthenticationRequired: return APIError(.forbidden, .reauthenticationRequired, error.description)
            case .deviceIDClaimed: return APIError(.conflict, .deviceIDClaimed, error.description)
            case .userDeleted: return APIError(.conflict, .userDeleted, error.description)
            case .lastSignInMethod: return APIError(.conflict, .lastSignInMethod, error.description)
            }
        case let rejection as DPoPRejection:
            return APIError(.badRequest, rejection == .nonceRequired ? .useDPoPNonce : .invalidDPoPProof, rejection.description)
        case StoreError.unavailable: return .unavailable()
        case let error as HTTPError:
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
