import ArgumentParser
import Foundation
import LatchkeyServer

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a live SQLite database consistently (while the server serves) to --output, and its master key to <output>.key.",
        discussion: """
            Restore: stop the server, put the copy where `database` points and the key file beside it as <database>.key \
            (or point master-key-file at it), start the server. PostgreSQL: use pg_dump and keep the master key (README, Backups).
            """)

    @OptionGroup var options: DatabaseOptions

    @Option(help: "Where to write the copy (must not exist); the master key goes to <output>.key.")
    var output: String

    func run() async throws {
        do {
            let (database, keyFile) = try await withServices(self.options) { services in try await services.backup(to: self.output) }
            print(database)
            FileHandle.standardError.write(Data("latchkey: database copied to \(database), master key to \(keyFile) (keep both)\n".utf8))
        } catch let error as BackupError {
            printError(error.description)
            throw LatchkeyExit.failed
        }
    }
}
