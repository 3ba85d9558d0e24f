import ArgumentParser
import Configuration
import Foundation
import LatchkeyServer
import Logging

@main
struct Latchkey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Device-first authentication server and its support commands.",
        subcommands: [
            Serve.self, AccessCodeCommand.self, KeysCommand.self, UsersCommand.self, DevicesCommand.self, OutboxCommand.self, AuditCommand.self,
            AdminCommand.self,
            Migrate.self,
        ])
}

/// Options every command shares: where the database is and how to read configuration.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help:
            "SQLite database file, or postgres://user@host:port/db (env LATCHKEY_DATABASE; default ./latchkey.sqlite). A URL with a password goes in LATCHKEY_DATABASE or the --config file, never here: arguments show in the process list."
    )
    var database: String?

    @Option(help: "JSON configuration file (env LATCHKEY_CONFIG).")
    var config: String?

    @Option(help: "Public URL of the server, used as token issuer (env LATCHKEY_PUBLIC_URL).")
    var publicURL: String?

    func validate() throws {
        // Every user of the machine can read a process's arguments (`ps`): a password is read from a file or the
        // environment only.
        if let database, PostgresLatchkeyDatabase.Location.isPostgres(database), URLComponents(string: database)?.password != nil {
            throw ValidationError(
                "--database must not carry a password (arguments show in the process list): "
                    + "put the URL in LATCHKEY_DATABASE or in the --config file.")
        }
    }

    func load(extra: [String: ConfigContent?] = [:]) async throws -> LatchkeyConfiguration {
        var overrides: [String: ConfigContent] = [:]
        let shared: [String: ConfigContent?] = ["database": self.database.map { .string($0) }, "public-url": self.publicURL.map { .string($0) }]
        for (key, value) in extra.merging(shared, uniquingKeysWith: { $1 }) {
            if let value { overrides[key] = value }
        }
        return try await LatchkeyConfiguration.load(overrides: overrides, configFile: self.config)
    }
}

/// A support action: runs `body` like ``withServices(_:_:)``, then records it in the audit log (who: this process's login
/// on this host; what: `action`; on what: `target` of the result, with its details). Nothing is recorded when it fails.
func withAudit<T>(
    _ options: DatabaseOptions, _ action: String, _ record: @escaping (T) -> (target: String, details: String?),
    _ body: (LatchkeyServices) async throws -> T
) async throws -> T {
    try await withServices(options) { services in
        let result = try await body(services)
        let (target, details) = record(result)
        try await services.audit.record(.commandLine(), action, target: target, details: details)
        return result
    }
}

/// Runs `body` with services open, closing them afterwards, and turns service errors into exit messages.
func withServices<T>(_ options: DatabaseOptions, _ body: (LatchkeyServices) async throws -> T) async throws -> T {
    let configuration = try await options.load()
    var logger = Logger(label: "latchkey")
    logger.logLevel = .warning
    do {
        return try await LatchkeyServices.withServices(configuration: configuration, recordIssuer: false, logger: logger, body)
    } catch let error as ServiceError {
        FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
        throw ExitCode.failure
    }
}
