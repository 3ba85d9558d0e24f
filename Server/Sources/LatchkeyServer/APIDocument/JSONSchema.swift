/// A JSON Schema (the OpenAPI 3.0 dialect) as the API document writes it.
package indirect enum JSONSchema: Sendable, Equatable {
    case string(format: String? = nil, values: [String]? = nil)
    case integer
    case number
    case boolean
    case array(JSONSchema)
    /// A JSON object of string keys to values of one schema (`additionalProperties`).
    case map(JSONSchema)
    /// Any JSON value.
    case any
    /// A named schema in `components.schemas`.
    case reference(String)
    case object(properties: [String: JSONSchema], required: [String])
    /// The schema, or `null`: a key that is always present, null when there is nothing to say (`nullable`).
    case nullable(JSONSchema)

    /// The schema as JSON (a `[String: Any]` ready for `JSONSerialization`).
    var json: [String: Any] {
        switch self {
        case .string(let format, let values):
            var schema: [String: Any] = ["type": "string"]
            if let format { schema["format"] = format }
            if let values { schema["enum"] = values }
            return schema
        case .integer: return ["type": "integer"]
        case .number: return ["type": "number"]
        case .boolean: return ["type": "boolean"]
        case .array(let items): return ["type": "array", "items": items.json]
        case .map(let values): return ["type": "object", "additionalProperties": values.json]
        case .any: return [:]
        case .reference(let name): return ["$ref": "#/components/schemas/\(name)"]
        case .object(let properties, let required):
            var schema: [String: Any] = ["type": "object", "properties": properties.mapValues(\.json)]
            if !required.isEmpty { schema["required"] = required.sorted() }
            return schema
        case .nullable(let schema): return schema.json.merging(["nullable": true]) { _, new in new }
        }
    }
}
