import Foundation

/// Reads the JSON Schema of a `Decodable` type from its own `init(from:)`: the type decodes itself from a decoder that
/// answers every request with a stand-in value and writes down what was asked — each key, its type, and whether it
/// was required (`decode`) or optional (`decodeIfPresent`). So the schemas in the API document are the wire types'
/// own Codable conformances: a field added to a type is in the document, with nothing kept by hand.
///
/// Nested types are named schemas (`$ref`), collected in ``schemas``. Enums that are `CaseIterable` and
/// string-backed list their cases.
package final class SchemaRecorder {
    /// The named schemas read so far, by type name.
    package private(set) var schemas: [String: JSONSchema] = [:]
    /// Which type each schema name stands for: a nested type whose short name another type took first is named by its
    /// whole path instead (`MFAFactorsResponseFactor` beside `MFARequiredResponse`'s `Factor`), never merged with it.
    private var owners: [String: ObjectIdentifier] = [:]

    package init() {}

    /// The schema of `type`: a reference to its named schema for structured types, an inline schema for values.
    package func schema(of type: any Decodable.Type) throws -> JSONSchema {
        if let value = Self.valueSchema(type) { return value }
        if let array = type as? any DecodableArray.Type { return .array(try self.schema(of: array.elementType)) }
        if let map = type as? any DecodableStringMap.Type { return .map(try self.schema(of: map.valueType)) }
        let name = self.uniqueName(of: type)
        if self.schemas[name] == nil {
            self.schemas[name] = .any  // a placeholder while it is read: types that contain themselves end
            let object = ObjectRecord()
            _ = try type.init(from: RecordingDecoder(recorder: self, object: object))
            self.schemas[name] =
                object.isSingleValue ? (object.singleValue ?? .any) : .object(properties: object.properties, required: object.required)
        }
        return .reference(name)
    }

    private func uniqueName(of type: any Decodable.Type) -> String {
        let identity = ObjectIdentifier(type)
        var name = Self.name(of: type)
        if let owner = self.owners[name], owner != identity {
            name = String(reflecting: type).split(separator: ".").dropFirst().joined()
        }
        self.owners[name] = identity
        return name
    }

    static func name(of type: any Decodable.Type) -> String {
        String(describing: type).split(separator: ".").last.map(String.init) ?? String(describing: type)
    }

    /// Inline schemas of plain values, dates, UUIDs and string enums.
    static func valueSchema(_ type: any Decodable.Type) -> JSONSchema? {
        switch type {
        case is String.Type: return .string()
        case is Bool.Type: return .boolean
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type: return .integer
        case is Double.Type, is Float.Type: return .number
        case is Date.Type: return .string(format: "date-time")
        case is UUID.Type: return .string(format: "uuid")
        case is URL.Type: return .string(format: "uri")
        // Any JSON value at all (`app_metadata`'s members).
        case is JSONValue.Type: return .any
        default: return Self.enumCases(type).map { .string(values: $0) }
        }
    }

    private static func enumCases(_ type: any Decodable.Type) -> [String]? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        return Self.rawValues(iterable)
    }

    private static func rawValues<T: CaseIterable>(_ type: T.Type) -> [String]? {
        let values = type.allCases.compactMap { ($0 as? any RawRepresentable)?.rawValue as? String }
        return values.isEmpty ? nil : values
    }

    /// A value of `type` to hand back to the decoding type: a stand-in for values, the first case of enums, an empty
    /// collection, or the type decoded (and recorded) from a fresh recording decoder.
    func standIn<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return "" as! T
        case is Bool.Type: return false as! T
        case is Int.Type: return 0 as! T
        case is Int64.Type: return Int64(0) as! T
        case is Int32.Type: return Int32(0) as! T
        case is UInt.Type: return UInt(0) as! T
        case is UInt64.Type: return UInt64(0) as! T
        case is Double.Type: return 0.0 as! T
        case is Float.Type: return Float(0) as! T
        case is Date.Type: return Date(timeIntervalSince1970: 0) as! T
        case is UUID.Type: return UUID() as! T
        case is URL.Type: return URL(string: "https://example.com")! as! T
        default: break
        }
        if let iterable = type as? any CaseIterable.Type, let first = Self.firstCase(iterable) as? T { return first }
        if let empty = type as? any EmptyCollection.Type, let value = empty.emptyValue as? T { return value }
        _ = try self.schema(of: type)
        return try type.init(from: RecordingDecoder(recorder: self, object: ObjectRecord()))
    }

    private static func firstCase<T: CaseIterable>(_ type: T.Type) -> Any? { type.allCases.first }
}

/// What one object's decoding asked for.
final class ObjectRecord {
    var properties: [String: JSONSchema] = [:]
    var required: [String] = []
    /// Set when the type decoded itself from a single value (a string, say) rather than from keys.
    var isSingleValue = false
    var singleValue: JSONSchema?

    /// Keys the type asked `decodeNil` about: their values may be null.
    var nullable: Set<String> = []

    func record(_ key: String, _ schema: JSONSchema, required: Bool) {
        self.properties[key] = self.nullable.contains(key) ? .nullable(schema) : schema
        if required, !self.required.contains(key) { self.required.append(key) }
    }
}

/// Arrays, whose element type names their schema.
protocol DecodableArray { static var elementType: any Decodable.Type { get } }
extension Array: DecodableArray where Element: Decodable { static var elementType: any Decodable.Type { Element.self } }

/// Dictionaries keyed by strings, whose value type names their schema.
protocol DecodableStringMap { static var valueType: any Decodable.Type { get } }
extension Dictionary: DecodableStringMap where Key == String, Value: Decodable { static var valueType: any Decodable.Type { Value.self } }

/// Collections a stand-in can be empty of.
protocol EmptyCollection { static var emptyValue: Any { get } }
extension Array: EmptyCollection { static var emptyValue: Any { [Element]() } }
extension Dictionary: EmptyCollection { static var emptyValue: Any { [Key: Value]() } }
