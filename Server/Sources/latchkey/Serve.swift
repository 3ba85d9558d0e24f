import ArgumentParser
import Configuration
import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyServer
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server. Creates and migrates the database and signing keys on first start.")

    @OptionGroup var options: DatabaseOptions

    @Option(help: "Address to listen on (env LATCHKEY_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (env LATCHKEY_PORT; default 8080).")
    var port: Int?

    func run() async throws {
        let configuration = try await self.options.load(extra: ["host": self.host.map { .string($0) }, "port": self.port.map { .int($0) }])
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = configuration.logLevel
            return handler
        }
        let logger = Logger(label: "latchkey")
        let services = try await LatchkeyServices.make(configuration: configuration, logger: logger)
        logger.info(
            "starting latchkey",
            metadata: [
                "version": "\(LatchkeyVersion.current)", "address": "\(configuration.host):\(configuration.port)",
                "database": "\(configuration.databaseDescription)", "issuer": "\(configuration.issuer)",
            ].merging(configuration.features) { first, _ in first })
        for warning in configuration.startupWarnings { logger.warning("\(warning)") }
        // One ServiceGroup: the HTTP server beside the database's service, key reloads, the revocation feed and pruning.
        // SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then the background services end.
        try await buildApplication(services: services, logger: logger).runService()
        await services.close()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or migrate the database and signing keys, then exit.")

    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        try await withServices(self.options, creating: true) { _ in print("database is up to date") }
    }
}
