import ArgumentParser
import Configuration
import Foundation
import LatchkeyAPI
import LatchkeyServer
import Logging

struct Latchkey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Device-first authentication server and its support commands.",
        discussion: "Exit codes: 0 ok, 1 failed, 2 usage, 3 not found, 78 configuration (each problem on stderr after error:).",
        version: LatchkeyVersion.current,
        subcommands: [
            Serve.self, ConfigCommand.self, AccessCodeCommand.self, KeysCommand.self, UsersCommand.self, DevicesCommand.self, AppAttestCommand.self,
            OutboxCommand.self,
            WebhooksCommand.self,
            AuditCommand.self, AdminCommand.self, BackupCommand.self, Migrate.self,
        ])
}

/// The exit codes of `latchkey` (README, "Support commands").
enum LatchkeyExit {
    static let failed = ExitCode(1)
    static let usage = ExitCode(2)
    static let notFound = ExitCode(3)
    /// `EX_CONFIG` of sysexits.h: a setting is wrong.
    static let configuration = ExitCode(78)
}

/// Prints `error: <message>` on stderr, the one way `latchkey` reports a failure.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
}

@main
enum Main {
    /// Parses and runs: usage errors exit 2 (ArgumentParser's default is 64), wrong settings 78 with each problem.
    static func main() async {
        do {
            var command = try Latchkey.parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as LatchkeyConfigurationError {
            for problem in error.problems { printError(problem) }
            Latchkey.exit(withError: LatchkeyExit.configuration)
        } catch let code as ExitCode {
            Latchkey.exit(withError: code)
        } catch {
            switch Latchkey.exitCode(for: error) {
            case .success:  // --help, --version
                Latchkey.exit(withError: error)
            case .validationFailure:
                var message = Latchkey.fullMessage(for: error)
                if message.hasPrefix("Error: ") { message = "error: " + message.dropFirst("Error: ".count) }
                FileHandle.standardError.write(Data((message + "\n").utf8))
                Latchkey.exit(withError: LatchkeyExit.usage)
            default:
                printError(Latchkey.message(for: error))
                Latchkey.exit(withError: LatchkeyExit.failed)
            }
        }
    }
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
///
/// A support command works on a database that exists: it says on stderr which one it opened, and an SQLite path with no
/// file is refused (exit 1) instead of creating an empty database there — `serve` and `migrate` create one.
func withServices<T>(_ options: DatabaseOptions, creating: Bool = false, _ body: (LatchkeyServices) async throws -> T) async throws -> T {
    let configuration = try await options.load()
    if !creating && !configuration.usesPostgres && !FileManager.default.fileExists(atPath: configuration.database) {
        printError("no database at \(configuration.database) (use --database, or LATCHKEY_DATABASE)")
        throw LatchkeyExit.failed
    }
    FileHandle.standardError.write(Data("latchkey: database \(configuration.databaseDescription)\n".utf8))
    var logger = Logger(label: "latchkey")
    logger.logLevel = .warning
    do {
        return try await LatchkeyServices.withServices(configuration: configuration, recordIssuer: false, logger: logger, body)
    } catch let error as ServiceError {
        printError(error.description)
        throw error.kind == .notFound ? LatchkeyExit.notFound : LatchkeyExit.failed
    }
}

/// Asks on a terminal before a destructive command; without a terminal the command needs `--yes`.
struct Confirmation: ParsableArguments {
    @Flag(help: "Do it without asking (needed when standard input is not a terminal).")
    var yes = false

    /// Returns when the action may go ahead; exits 1 otherwise.
    func confirm(_ action: String) throws {
        if self.yes { return }
        guard isatty(STDIN_FILENO) == 1 else {
            printError("\(action): add --yes to confirm (standard input is not a terminal)")
            throw LatchkeyExit.failed
        }
        FileHandle.standardError.write(Data("\(action)? Type yes to go ahead: ".utf8))
        guard readLine(strippingNewline: true)?.lowercased() == "yes" else {
            printError("not confirmed; nothing changed")
            throw LatchkeyExit.failed
        }
    }
}

/// Prints a list: tab-separated under a header line, or with `json` one JSON array of objects whose keys are the
/// column names in lower case with `_` for spaces (`NEXT ATTEMPT` → `next_attempt`). Empty cells (`-`) are null in JSON.
func printRows(_ columns: [String], _ rows: [[String]], json: Bool) throws {
    guard json else {
        print(columns.joined(separator: "\t"))
        for row in rows { print(row.joined(separator: "\t")) }
        return
    }
    let keys = columns.map { $0.lowercased().replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "-", with: "_") }
    let objects: [[String: String?]] = rows.map { row in
        Dictionary(uniqueKeysWithValues: zip(keys, row.map { $0 == "-" || $0.isEmpty ? nil : $0 }))
    }
    try printJSON(objects)
}

/// Prints `value` as pretty, key-sorted JSON (dates ISO 8601): what `--json` gives every list and show command.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
