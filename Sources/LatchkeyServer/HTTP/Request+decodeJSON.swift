import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

@available(LatchkeyServer 1.0, *)
extension Request {
    /// Decodes the JSON body as `T`, answering 413 over `limit` bytes and 400 for anything malformed.
    ///
    /// The 400 message names the field at fault but never echoes the submitted value.
    mutating func decodeJSON<T: Decodable>(as type: T.Type, limit: Int, allowEmpty: Bool = false, emptyValue: T? = nil) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await self.collectBody(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than \(limit) bytes.")
        }
        if buffer.readableBytes == 0, let emptyValue { return emptyValue }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError.badRequest(Self.describe(error))
        } catch {
            throw APIError.badRequest("The request body is not valid JSON.")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, _): return "Missing field \"\(key.stringValue)\"."
        case .typeMismatch(let type, let context): return "Field \"\(path(context))\" must be \(Self.name(of: type))."
        case .valueNotFound(let type, let context): return "Field \"\(path(context))\" must be \(Self.name(of: type)), not null."
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "The request body is not valid JSON." : "Field \"\(path(context))\" has an invalid value."
        @unknown default: return "The request body is not valid."
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        default: "an object of the documented shape"
        }
    }
}

/// Parses a UUID field, answering 400 `invalid_uuid` naming the field.
@available(LatchkeyServer 1.0, *)
func canonicalUUID(_ text: String, field: String) throws -> String {
    guard let canonical = UUID.canonical(text) else {
        throw APIError.badRequest("Field \"\(field)\" must be a UUID.", code: .invalidUUID)
    }
    return canonical
}

/// A JSON response carrying tokens: never stored by a cache on the way (RFC 6749 §5.1).
@available(LatchkeyServer 1.0, *)
func tokenResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    var response = try jsonResponse(value, status: status)
    response.headers[.cacheControl] = "no-store"
    response.headers[HTTPField.Name("Pragma")!] = "no-cache"
    return response
}

/// A JSON response with `status`.
@available(LatchkeyServer 1.0, *)
func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(value)
    return Response(
        status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
