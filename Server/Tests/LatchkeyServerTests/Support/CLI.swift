import Foundation
import LatchkeyTestSupport
import Testing

/// What one run of the `latchkey` executable printed and how it exited.
typealias CLIRun = ProcessResult

extension ProcessResult {
    /// The tab-separated rows a `list` command prints under its header line.
    var tableRows: [[String]] {
        self.stdoutLines.dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }
}

/// Runs the real, built `latchkey` executable as a separate process, the way support staff do.
enum LatchkeyCLI {
    /// The built executable; a test that needs it fails (never skips) when it is missing.
    static func executable() throws -> URL { try ProcessRunner.executable(named: "latchkey") }

    /// This process's environment without any `LATCHKEY_*` variable, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessRunner.inheritedEnvironment(removingPrefix: "LATCHKEY_").merging(extra) { $1 }
    }

    /// Runs `latchkey <arguments>` with `LATCHKEY_MASTER_KEY` set and no other `LATCHKEY_*` variable,
    /// in `workingDirectory` (so a forgotten `--database` cannot touch the repository).
    static func run(
        _ arguments: [String], masterKey: String, workingDirectory: URL, environment extra: [String: String] = [:]
    ) async throws
        -> CLIRun
    {
        try await ProcessRunner.run(
            try self.executable(), arguments: arguments,
            environment: self.environment(["LATCHKEY_MASTER_KEY": masterKey].merging(extra) { $1 }), workingDirectory: workingDirectory)
    }

    /// Waits for a `latchkey` process started with ``ProcessRunner/spawn(_:arguments:environment:workingDirectory:stdout:stderr:)``
    /// to exit; returns its exit code (128 + the signal when a signal ended it).
    static func waitForExit(_ pid: pid_t) async -> Int32 { await ProcessRunner.waitForExit(pid, timeout: .seconds(60)) }
}

extension TestServer {
    /// Runs `latchkey <arguments> --database <this server's database>` with this server's master key.
    func cli(_ arguments: String...) async throws -> CLIRun {
        try await self.cli(arguments)
    }

    func cli(_ arguments: [String]) async throws -> CLIRun {
        try await LatchkeyCLI.run(arguments + ["--database", self.databasePath], masterKey: Self.masterKey, workingDirectory: self.directory)
    }
}
