import Foundation
import LatchkeyQR
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The inline SVG: well-formed, the right size, exactly the dark modules, and nothing a strict CSP would block.
struct SVGTests {
    static let code = try! QRCode(text: "otpauth://totp/Latchkey:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Latchkey")

    @Test func isOneWellFormedSVGElement() throws {
        let document = try XMLDocument(xmlString: Self.code.svg(), options: [])
        let root = try #require(document.rootElement())
        #expect(root.name == "svg")
        #expect(root.uri == "http://www.w3.org/2000/svg")
        #expect(root.attributeValue("role") == "img")
        #expect(root.attributeValue("shape-rendering") == "crispEdges")
        #expect(root.children?.compactMap(\.name) == ["rect", "path"])
    }

    @Test(arguments: [(4, 4), (1, 0), (10, 2)])
    func sizesItsModulesAndQuietZone(moduleSize: Int, quietZone: Int) throws {
        let root = try #require(try XMLDocument(xmlString: Self.code.svg(moduleSize: moduleSize, quietZone: quietZone), options: []).rootElement())
        let side = Self.code.size + 2 * quietZone
        #expect(root.attributeValue("viewBox") == "0 0 \(side) \(side)")
        #expect(root.attributeValue("width") == "\(side * moduleSize)")
        #expect(root.attributeValue("height") == "\(side * moduleSize)")
        let background = try #require(root.elements(forName: "rect").first)
        #expect(background.attributeValue("width") == "\(side)")
        #expect(background.attributeValue("fill") == "#fff")
    }

    @Test(arguments: [0, 4])
    func itsPathCoversExactlyTheDarkModules(quietZone: Int) throws {
        let root = try #require(try XMLDocument(xmlString: Self.code.svg(quietZone: quietZone), options: []).rootElement())
        let path = try #require(root.elements(forName: "path").first)
        #expect(path.attributeValue("fill") == "#000")
        let painted = try Self.modulesPainted(by: try #require(path.attributeValue("d")), offset: quietZone)
        let dark = (0..<Self.code.size).flatMap { y in (0..<Self.code.size).filter { Self.code[$0, y] }.map { [$0, y] } }
        #expect(painted.count == dark.count)
        #expect(Set(painted) == Set(dark))
    }

    @Test func holdsNoScriptNoStyleAndNoExternalReference() {
        let svg = Self.code.svg()
        for forbidden in ["<script", "style=", "<style", "href", "url(", "<foreignObject", "javascript:", "<!"] {
            #expect(!svg.contains(forbidden), "the SVG holds \(forbidden)")
        }
        #expect(svg.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "the SVG holds an event handler")
    }

    @Test func escapesItsLabel() throws {
        let label = #"Scan <me> & "enrol" ada's key"#
        let root = try #require(try XMLDocument(xmlString: Self.code.svg(label: label), options: []).rootElement())
        #expect(root.attributeValue("aria-label") == label)
        #expect(!Self.code.svg().contains("aria-label"))
    }

    /// The modules `d` paints, given it is a list of `M x y h n v 1 h -n z` runs: `[x, y]` each, quiet zone removed.
    static func modulesPainted(by d: String, offset: Int) throws -> [[Int]] {
        var modules: [[Int]] = []
        for run in d.split(separator: "M") {
            let numbers = run.split(whereSeparator: { " hvz".contains($0) }).map { Int($0) }
            let parsed = try #require(numbers.count == 5 ? numbers.compactMap { $0 } : nil, "not a run: M\(run)")
            let (x, y, length) = (parsed[0] - offset, parsed[1] - offset, parsed[2])
            #expect(run == "\(parsed[0]) \(parsed[1])h\(length)v1h-\(length)z")
            #expect(length >= 1)
            modules += (x..<(x + length)).map { [$0, y] }
        }
        return modules
    }
}

extension XMLElement {
    /// The attribute's value: `attribute(forName:)` finds none on an element in a namespace on Linux.
    func attributeValue(_ name: String) -> String? {
        self.attributes?.first { $0.name == name }?.stringValue
    }
}
