import Foundation
import Hummingbird
import LatchkeyAPI
import NIOCore

/// Decodes JSON request bodies for `request.decode(as:context:)`: an empty body is the type's
/// ``EmptyBodyDecodable/emptyBody`` when it has one; a plain body of a ``PlainJSONDecodable`` type is read without
/// `JSONDecoder`, to the same value; anything malformed is 400 `invalid_request` naming the field at
/// fault, never echoing the submitted value. (A body over the context's `maxUploadSize` is 413 before this runs.)
public struct LatchkeyRequestDecoder: RequestDecoder {
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        if buffer.readableBytes == 0, let empty = type as? any EmptyBodyDecodable.Type, let value = empty.emptyBody as? T { return value }
        if let plain = type as? any PlainJSONDecodable.Type, let value = buffer.withUnsafeReadableBytes({ plain.init(plainJSON: $0) }) as? T {
            return value
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
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

/// A request body type an empty body stands for (`POST /api/v1/auth/logout` without a body is a local logout).
package protocol EmptyBodyDecodable {
    static var emptyBody: Self { get }
}

/// Encodes `ResponseEncodable` answers: sorted-key JSON, ISO 8601 dates, `application/json; charset=utf-8`. A few
/// answers on hot routes write the same bytes themselves (`JSONBodyWritable`).
public struct LatchkeyResponseEncoder: ResponseEncoder {
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        if let writable = value as? any JSONBodyWritable {
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: writable.jsonBody()))
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try Self.jsonEncoder().encode(value))))
    }

    /// The encoder of every other answer: keys sorted, slashes not escaped, ISO 8601 dates.
    package static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// Parses a UUID field, answering 400 `invalid_uuid` naming the field.
func canonicalUUID(_ text: String, field: String) throws -> String {
    guard let canonical = UUID.canonical(text) else {
        throw APIError.badRequest("Field \"\(field)\" must be a UUID.", code: .invalidUUID)
    }
    return canonical
}
