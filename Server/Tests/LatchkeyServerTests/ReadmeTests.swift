import Foundation
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The README's layout and endpoint table, held to the tree and to the router's route list so they cannot drift.
@Suite struct ReadmeTests {
    /// The repository's root: `Server/` is the package root of these tests.
    static let repositoryRoot = ProcessRunner.packageRoot.deletingLastPathComponent()

    static func readme() throws -> String {
        try String(contentsOf: self.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The lines of the first fenced block after `heading`.
    static func block(after heading: String, in text: String) throws -> [Substring] {
        let section = try #require(text.range(of: "\n\(heading)\n"), "no '\(heading)' in the README")
        let rest = text[section.upperBound...]
        let open = try #require(rest.range(of: "```\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```\n"))
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n")
    }

    /// Every folder the layout names (`a/b/`, relative to the repository's root) and every file entry
    /// (`Package.swift`), read by indentation: an entry at column 0, 2 or 4 is a child of the entry above it at the
    /// column before; other words ending in `/` name folders inside the line's entry (or, on a deeper continuation
    /// line, inside the last entry).
    static func layoutPaths(_ lines: [Substring]) -> [String] {
        var parents: [Int: String] = [:]
        var last = ""
        var paths: [String] = []
        for line in lines {
            let indent = line.prefix(while: { $0 == " " }).count
            var words = line.split(separator: " ").map(String.init)
            if [0, 2, 4].contains(indent), let first = words.first, first.hasSuffix("/") || first == "Package.swift" {
                let path = (indent == 0 ? "" : parents[indent - 2] ?? "") + first
                paths.append(path)
                if first.hasSuffix("/") {
                    parents[indent] = path
                    last = path
                }
                words.removeFirst()
            }
            for word in words where word.hasSuffix("/") && word.first?.isLetter == true {
                paths.append(last + word)
            }
        }
        return paths
    }

    /// The folders directly inside `path` (hidden ones and build folders left out).
    static func folders(in path: String) throws -> Set<String> {
        let url = self.repositoryRoot.appendingPathComponent(path)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        return Set(
            names.filter { name in
                var isDirectory: ObjCBool = false
                return !name.hasPrefix(".")
                    && FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                    && isDirectory.boolValue
            })
    }

    @Test func everyPathTheLayoutNamesExists() throws {
        let paths = Self.layoutPaths(try Self.block(after: "## Layout", in: try Self.readme()))
        #expect(paths.count > 30)
        for path in paths {
            #expect(
                FileManager.default.fileExists(atPath: Self.repositoryRoot.appendingPathComponent(path).path), "the README's layout names \(path)")
        }
    }

    @Test(arguments: ["", "Sources/", "Server/", "Server/Sources/", "Server/Sources/LatchkeyServer/", "Sources/LatchkeyClient/"])
    func theLayoutNamesEveryFolderOf(_ parent: String) throws {
        let named = Set(Self.layoutPaths(try Self.block(after: "## Layout", in: try Self.readme())))
        let unnamed = try Self.folders(in: parent).sorted().filter { !named.contains("\(parent)\($0)/") }
        #expect(unnamed.isEmpty, "the README's layout does not name these folders of \(parent.isEmpty ? "the root" : parent): \(unnamed)")
    }

    /// The headers of the README's endpoint tables: the API's table and the email routes' table.
    static let endpointTableHeaders = ["| endpoint | auth | what |", "| Route | Answers |"]

    /// `METHOD /path` in backticks in the first cell of the README's endpoint tables (a cell may name several).
    static func documentedRoutes(_ text: String) -> Set<String> {
        var routes: Set<String> = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var inEndpointTable = false
        for (index, line) in lines.enumerated() {
            if !line.hasPrefix("|") {
                inEndpointTable = false
                continue
            }
            if index + 1 < lines.count, lines[index + 1].hasPrefix("|---") || lines[index + 1].hasPrefix("| ---") {
                inEndpointTable = Self.endpointTableHeaders.contains(String(line))
                continue
            }
            guard inEndpointTable, line.hasPrefix("| `") else { continue }
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for quoted in cell.split(separator: "`").enumerated() where quoted.offset % 2 == 0 {
                let words = quoted.element.split(separator: " ")
                guard words.count >= 2, ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].contains(words[0]) else { continue }
                let path = words[1].prefix { $0 != "?" }
                routes.insert("\(words[0]) \(path)")
            }
        }
        return routes
    }

    /// Every route the router serves is in a README endpoint table, and every API route those tables name is served.
    @Test func theEndpointTablesNameEveryServedRouteAndNothingElse() async throws {
        let server = try await TestServer.make()
        let served = OpenAPIDocumentTests.routes(of: server)
        let documented = Self.documentedRoutes(try Self.readme())
        // Forward auth answers every method; the README names it once, as GET.
        let missing = served.filter { route in
            !documented.contains(route) && !(route.hasSuffix(" /api/v1/authorize") && documented.contains("GET /api/v1/authorize"))
        }
        #expect(missing.isEmpty, "served, not in the README's endpoint tables: \(missing.sorted())")
        #expect(documented.count > 30)
        let unknown = documented.filter { route in
            let path = route.split(separator: " ")[1]
            let isOurs = path.hasPrefix("/api/v1/") || path.hasPrefix("/.well-known/") || path == "/openapi.json" || path == "/metrics"
            return isOurs && !served.contains(route)
        }
        #expect(unknown.isEmpty, "in the README's tables, not served: \(unknown.sorted())")
        await server.close()
    }
}

/// Issue 29: one reference table of every setting, generated from the configuration types.
@Suite struct SettingsReferenceReadmeTests {
    @Test func theREADMEsSettingsReferenceIsTheGeneratedOne() async throws {
        let readme = try ReadmeTests.readme()
        let begin = try #require(readme.range(of: "<!-- settings-reference:begin -->\n"))
        let end = try #require(readme.range(of: "\n<!-- settings-reference:end -->", range: begin.upperBound..<readme.endIndex))
        let documented = String(readme[begin.upperBound..<end.lowerBound])
        let generated = try await SettingsReference.table()
        #expect(documented == generated, "update the README's settings reference: swift run --package-path Server latchkey config reference")
    }

    @Test func everySettingTheConfigurationReadsHasAMeaning() async throws {
        let table = try await SettingsReference.table()
        let undocumented = table.split(separator: "\n").filter { $0.contains("(undocumented)") }
        #expect(undocumented.isEmpty, "settings without a meaning in SettingsReference.meanings: \(undocumented)")
        // And every meaning names a setting the configuration reads (or a family member).
        #expect(table.split(separator: "\n").count == SettingsReference.meanings.count + 2)
    }
}
