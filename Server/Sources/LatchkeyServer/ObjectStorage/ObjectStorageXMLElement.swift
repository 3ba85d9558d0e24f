import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of an STS or S3 XML response: its local name (namespaces dropped), its text and its child elements.
///
/// Built with Foundation's `XMLParser` (external entities never resolved); the typed readers below throw an
/// ``ObjectStorageResponseError`` naming the element's path instead of crashing on a missing or malformed value.
package struct ObjectStorageXMLElement: Sendable, Hashable {
    /// The local name: `Credentials`, `Contents`.
    package var name: String
    /// Where the element sits, for messages: `AssumeRoleResponse/AssumeRoleResult/Credentials`.
    package var path: String
    /// The text directly inside the element, exactly as written (entities and CDATA decoded).
    package var text: String = ""
    /// The child elements, in document order.
    package var children: [ObjectStorageXMLElement] = []

    /// AWS responses nest a few levels deep; anything far deeper is refused rather than walked.
    static let maximumDepth = 32

    /// The root element of `data`; throws ``ObjectStorageResponseError/Code/malformedXML`` for anything but
    /// well-formed XML.
    package static func parse(_ data: Data) throws -> ObjectStorageXMLElement {
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let builder = TreeBuilder()
        parser.delegate = builder
        // On Linux `parse()` can return true after reporting an error (content after the root element): check both.
        let parsed = parser.parse()
        guard parsed, builder.failure == nil, parser.parserError == nil, let root = builder.root else {
            let reason = builder.failure ?? parser.parserError.map { "\($0)" } ?? "no root element"
            throw ObjectStorageResponseError(.malformedXML, "the response is not well-formed XML: \(reason)")
        }
        return root
    }

    /// The first child named `name`.
    package func child(_ name: String) -> ObjectStorageXMLElement? {
        self.children.first { $0.name == name }
    }

    /// Every child named `name`, in document order.
    package func children(named name: String) -> [ObjectStorageXMLElement] {
        self.children.filter { $0.name == name }
    }

    /// The first child named `name`; throws ``ObjectStorageResponseError/Code/missingElement`` when there is none.
    package func requiredChild(_ name: String) throws -> ObjectStorageXMLElement {
        guard let child = self.child(name) else {
            throw ObjectStorageResponseError(.missingElement, "the response has no \(self.path)/\(name)")
        }
        return child
    }

    /// The text of the child `name`, or `nil` when there is no such child.
    package func text(_ name: String) -> String? {
        self.child(name)?.text
    }

    /// The text of the child `name`; throws when there is no such child or it is empty.
    package func requiredText(_ name: String) throws -> String {
        let text = try self.requiredChild(name).text
        guard !text.isEmpty else { throw ObjectStorageResponseError(.missingElement, "the response's \(self.path)/\(name) is empty") }
        return text
    }

    /// The text of the child `name` read by `convert` (the text comes trimmed); `nil` when there is no such child.
    package func value<Value>(_ name: String, as kind: String, _ convert: (String) -> Value?) throws -> Value? {
        guard let child = self.child(name) else { return nil }
        let text = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = convert(text) else {
            throw ObjectStorageResponseError(.invalidValue, "the response's \(child.path) is not \(kind): \"\(text.prefix(64))\"")
        }
        return value
    }

    /// The child `name` as a number, a boolean or an ISO 8601 date; `nil` when there is no such child.
    package func integer(_ name: String) throws -> Int64? { try self.value(name, as: "an integer") { Int64($0) } }
    package func boolean(_ name: String) throws -> Bool? {
        try self.value(name, as: "true or false") { ["true": true, "false": false][$0.lowercased()] }
    }
    package func date(_ name: String) throws -> Date? { try self.value(name, as: "an ISO 8601 date", Self.date(from:)) }

    /// The child `name`, which must be there, read by one of the readers above.
    package func required<Value>(_ name: String, _ read: (String) throws -> Value?) throws -> Value {
        guard let value = try read(name) else { throw ObjectStorageResponseError(.missingElement, "the response has no \(self.path)/\(name)") }
        return value
    }

    /// `2011-07-15T23:28:33.359Z`, `2019-11-09T13:34:41Z` or with an offset.
    static func date(from text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

/// Collects the parser's events into ``ObjectStorageXMLElement``s (one parse, one thread: no sharing).
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: ObjectStorageXMLElement?
    var failure: String?
    private var stack: [ObjectStorageXMLElement] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard self.root == nil else { return self.fail("more than one root element", parser) }
        guard self.stack.count < ObjectStorageXMLElement.maximumDepth else {
            return self.fail("elements nested deeper than \(ObjectStorageXMLElement.maximumDepth)", parser)
        }
        // With namespaces processed the name is the local one; strip a prefix anyway should a parser keep it.
        let name = elementName.split(separator: ":").last.map(String.init) ?? elementName
        let path = self.stack.last.map { "\($0.path)/\(name)" } ?? name
        self.stack.append(ObjectStorageXMLElement(name: name, path: path))
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if self.failure == nil { self.failure = "\(parseError)" }
    }

    /// Stops at the first problem the parser itself lets pass.
    private func fail(_ reason: String, _ parser: XMLParser) {
        if self.failure == nil { self.failure = reason }
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !self.stack.isEmpty else { return }
        self.stack[self.stack.count - 1].text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        guard !self.stack.isEmpty else { return }
        self.stack[self.stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let element = self.stack.popLast() else { return }
        if self.stack.isEmpty {
            self.root = element
        } else {
            self.stack[self.stack.count - 1].children.append(element)
        }
    }
}
