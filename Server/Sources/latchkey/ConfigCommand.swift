import ArgumentParser
import Configuration
import Foundation
import LatchkeyServer

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check the settings, or show the ones in effect and where each came from.",
        subcommands: [Check.self, Show.self, Reference.self])

    /// The options `serve` reads settings from, so a check sees what a start would.
    struct Settings: ParsableArguments {
        @OptionGroup var options: DatabaseOptions

        @Option(help: "Address to listen on, as `serve --host`.")
        var host: String?

        @Option(help: "Port to listen on, as `serve --port`.")
        var port: Int?

        func load() async throws -> LatchkeyConfiguration {
            let configuration = try await self.options.load(extra: ["host": self.host.map { .string($0) }, "port": self.port.map { .int($0) }])
            try LatchkeyServices.validate(configuration)
            return configuration
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every setting as `serve` would, opening nothing: exit 0 when they are right, 78 with each problem on stderr.")

        @OptionGroup var settings: Settings

        func run() async throws {
            _ = try await self.settings.load()
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every setting in effect with where it came from (flag, environment, file or default); secrets as <set>.")

        @OptionGroup var settings: Settings

        @Flag(help: "One JSON array of {key, value, source} objects.")
        var json = false

        func run() async throws {
            let configuration = try await self.settings.load()
            let rows = configuration.settings.values.sorted { $0.key < $1.key }.map { reading in
                (key: reading.key, value: reading.shownValue, source: reading.source.description)
            }
            if self.json { return try printJSON(rows.map { ["key": $0.key, "value": $0.value, "source": $0.source] }) }
            let width = rows.map(\.key.count).max() ?? 0
            for row in rows {
                print(row.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + row.value + "  (\(row.source))")
            }
        }
    }
}

extension ConfigCommand {
    struct Reference: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the reference table of every setting (Markdown: key, environment variable, type, default, meaning).")

        func run() async throws {
            print(try await SettingsReference.table())
        }
    }
}
