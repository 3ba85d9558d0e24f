import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import LatchkeyServer

/// The served API document, checked against every answer a test gets: ``TestServer/test(_:_:)`` makes the document of
/// the server under test current, and `send` records an issue for any answer the document does not describe — a served
/// path or method it lacks, a status it does not list, a header of the API it does not name, a body field it does not
/// have or a required one the body lacks. So the whole suite, not one test, keeps the document and the routes one truth.
final class DocumentedAnswers: @unchecked Sendable {
    // Read-only after init.
    let document: [String: Any]

    /// The document of the server the current test talks to (none: nothing is checked).
    @TaskLocal static var current: DocumentedAnswers?

    init(_ data: Data) throws {
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw TestFailure("not a JSON object") }
        self.document = document
    }

    init(document: [String: Any]) { self.document = document }

    private static let cache = Mutex<[String: DocumentedAnswers]>([:])

    /// The checker of `operations`' document; built once per distinct list (most test servers serve the same one).
    static func of(_ operations: [APIOperation]) throws -> DocumentedAnswers {
        let key = Self.fingerprint(operations)
        if let known = Self.cache.withLock({ $0[key] }) { return known }
        let checker = try DocumentedAnswers(apiDocument(of: operations))
        Self.cache.withLock { $0[key] = checker }
        return checker
    }

    /// Everything of `operations` the checks read — routes, statuses, body types, headers — cheaply (a `description` of
    /// the whole list, by reflection, cost an eighth of the suite's time).
    private static func fingerprint(_ operations: [APIOperation]) -> String {
        var key = ""
        for operation in operations {
            key += "\(operation.method.rawValue) \(operation.path) \(operation.security.rawValue) \(operation.commonHeaders)"
            for outcome in operation.outcomes {
                key += " \(outcome.status):\(outcome.body.map { String(reflecting: $0) } ?? "-"):\(outcome.headers):\(outcome.isHTMLPage)"
            }
            key += "\n"
        }
        return key
    }

    /// Headers of the API's own an answer may carry only where the document names them.
    static let checkedHeaders = [
        "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "WWW-Authenticate", "DPoP-Nonce",
    ]

    /// What in the answer to `method` `uri` the document does not describe; empty when it describes all of it.
    func problems(_ method: HTTPRequest.Method, _ uri: String, status: Int, headers: HTTPFields, body: Data) -> [String] {
        let path = String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let name = "\(method.rawValue) \(path) → \(status)"
        guard let (template, item) = self.pathItem(for: path) else {
            // Not served: the router's 404, with the envelope.
            return status == 404 ? [] : ["\(name): the path is not in the document"]
        }
        guard let operation = item[method.rawValue.lowercased()] as? [String: Any] else {
            return [404, 405].contains(status) ? [] : ["\(name): \(method.rawValue) \(template) is not in the document"]
        }
        let responses = operation["responses"] as? [String: Any] ?? [:]
        // `default` stands for the 500 of an unexpected fault, nothing else.
        guard let response = (responses[String(status)] ?? (status == 500 ? responses["default"] : nil)) as? [String: Any] else {
            return ["\(name): status \(status) is not documented for \(method.rawValue) \(template)"]
        }
        var problems: [String] = []
        let documentedHeaders = Set(((response["headers"] as? [String: Any]) ?? [:]).keys.map { $0.lowercased() })
        for header in Self.checkedHeaders where headers[HTTPField.Name(header)!] != nil && !documentedHeaders.contains(header.lowercased()) {
            problems.append("\(name): header \(header) is not documented for this status")
        }
        let schema = ((response["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
        let isJSON = headers[.contentType]?.hasPrefix("application/json") == true
        if method == .head { return problems }  // no body, by definition
        switch (schema, isJSON && !body.isEmpty) {
        case (nil, true) where template != "/openapi.json":
            problems.append("\(name): a JSON body is sent, none is documented")
        case (let schema?, true):
            guard let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
                return problems + ["\(name): the body is not JSON"]
            }
            self.validate(value, against: schema, at: "body", problems: &problems)
            problems = problems.map { $0.hasPrefix(name) ? $0 : "\(name): \($0)" }
        case (_?, false):
            problems.append("\(name): a JSON body is documented, none was sent")
        default: break
        }
        return problems
    }

    /// The document's path item for `path`, preferring literal segments over `{parameters}`.
    func pathItem(for path: String) -> (String, [String: Any])? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var best: (template: String, item: [String: Any], parameters: Int)?
        for (template, item) in self.document["paths"] as? [String: [String: Any]] ?? [:] {
            let parts = template.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == segments.count else { continue }
            var parameters = 0
            let matches = zip(parts, segments).allSatisfy { part, segment in
                if part.hasPrefix("{") && part.hasSuffix("}") {
                    parameters += 1
                    return !segment.isEmpty
                }
                return part == segment
            }
            if matches && parameters < (best?.parameters ?? .max) { best = (template, item, parameters) }
        }
        return best.map { ($0.template, $0.item) }
    }

    private func validate(_ value: Any, against schema: [String: Any], at path: String, problems: inout [String]) {
        if let reference = schema["$ref"] as? String {
            let name = String(reference.split(separator: "/").last ?? "")
            guard let resolved = ((self.document["components"] as? [String: Any])?["schemas"] as? [String: Any])?[name] as? [String: Any] else {
                problems.append("\(path): \(reference) is not in components.schemas")
                return
            }
            return self.validate(value, against: resolved, at: path, problems: &problems)
        }
        if value is NSNull {
            if schema["nullable"] as? Bool != true { problems.append("\(path) is null, the document does not allow null") }
            return
        }
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { return problems.append("\(path) is not an object") }
            if let properties = schema["properties"] as? [String: [String: Any]] {
                for (key, member) in object {
                    guard let property = properties[key] else {
                        problems.append("\(path).\(key) is sent, not documented")
                        continue
                    }
                    self.validate(member, against: property, at: "\(path).\(key)", problems: &problems)
                }
                for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                    problems.append("\(path).\(key) is documented as required, not sent")
                }
            }
            if let values = schema["additionalProperties"] as? [String: Any] {
                for (key, member) in object { self.validate(member, against: values, at: "\(path).\(key)", problems: &problems) }
            }
        case "array":
            guard let array = value as? [Any] else { return problems.append("\(path) is not an array") }
            if let items = schema["items"] as? [String: Any] {
                for (index, element) in array.enumerated() { self.validate(element, against: items, at: "\(path)[\(index)]", problems: &problems) }
            }
        case "string":
            guard let string = value as? String else { return problems.append("\(path) is not a string") }
            if let values = schema["enum"] as? [String], !values.contains(string) {
                problems.append("\(path) is \"\(string)\", not one of the documented \(values)")
            }
        case "integer":
            guard !Self.isBoolean(value), let number = value as? NSNumber, number.doubleValue.rounded() == number.doubleValue else {
                return problems.append("\(path) is not an integer")
            }
        case "number":
            guard !Self.isBoolean(value), value is NSNumber else { return problems.append("\(path) is not a number") }
        case "boolean":
            guard Self.isBoolean(value) else { return problems.append("\(path) is not a boolean") }
        default: break  // any value
        }
    }

    private static func isBoolean(_ value: Any) -> Bool {
        // JSONSerialization's true and false are NSNumbers of type "c" (a 1 or 0 also converts to Bool).
        if let number = value as? NSNumber { return String(cString: number.objCType) == "c" }
        return value is Bool
    }
}

extension TestResponse {
    /// Records an issue for each part of this answer the current server's document does not describe.
    func checkDocumented(_ method: HTTPRequest.Method, _ uri: String, sourceLocation: SourceLocation) {
        guard let check = DocumentedAnswers.current else { return }
        for problem in check.problems(method, uri, status: Int(self.status.code), headers: self.headers, body: Data(self.body.readableBytesView)) {
            Issue.record("undocumented answer: \(problem)", sourceLocation: sourceLocation)
        }
    }
}
