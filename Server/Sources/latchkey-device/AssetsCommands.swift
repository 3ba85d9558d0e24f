import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Assets: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The app's downloadable assets, asked for with the device ID only (X-Device-ID, no Authorization).",
        subcommands: [AssetsList.self, AssetURL.self])
}

struct AssetsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List one page of assets (GET /assets): size and key per line, then next_cursor when there are more.")
    @OptionGroup var options: DeviceOptions
    @Option(help: "A folder below the assets folder, e.g. kits/.") var prefix: String?
    @Option(help: "The next_cursor of the previous page.") var cursor: String?

    func run() async throws {
        try await self.options.run { session in
            let page = try await session.assets(prefix: self.prefix, cursor: self.cursor)
            if self.options.json { return Output.printJSON(encoding: page) }
            for asset in page.assets { print("\(asset.size)\t\(asset.key)") }
            if let next = page.nextCursor { print("next_cursor: \(next)") }
        }
    }
}

struct AssetURL: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "url", abstract: "Print a presigned download URL for an asset (GET /assets/url), e.g. for curl.")
    @OptionGroup var options: DeviceOptions
    @Argument(help: "The asset's key, as list shows it.") var key: String

    func run() async throws {
        try await self.options.run { session in
            let presigned = try await session.assetURL(key: self.key)
            if self.options.json { return Output.printJSON(encoding: presigned) }
            print(presigned.url)
        }
    }
}
