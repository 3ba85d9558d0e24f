import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of the `latchkey` executable printed and how it exited.
struct CLIRun: Sendable, CustomStringConvertible {
    let arguments: [String]
    let exitCode: Int32
    let stdout: String
    let stderr: String

    /// The non-empty lines of stdout.
    var stdoutLines: [String] { self.stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    /// The tab-separated rows a `list` command prints under its header line.
    var tableRows: [[String]] {
        self.stdoutLines.dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    var description: String {
        "latchkey \(self.arguments.joined(separator: " ")) → exit \(self.exitCode)\nstdout: \(self.stdout)\nstderr: \(self.stderr)"
    }
}

/// Runs the real, built `latchkey` executable as a separate process, the way support staff do.
enum LatchkeyCLI {
    /// The package root, found from this file's path (`<root>/Tests/LatchkeyServerTests/Support/CLI.swift`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Where the executable may be: beside the test bundle, or in the package's debug build directory.
    static var candidates: [URL] {
        [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("latchkey"),
            self.packageRoot.appendingPathComponent(".build/debug/latchkey"),
        ]
    }

    /// The built executable; a test that needs it fails (never skips) when it is missing.
    static func executable() throws -> URL {
        let fileManager = FileManager.default
        for candidate in self.candidates {
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                fileManager.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        throw TestFailure("the latchkey executable was not found (build it first: swift build); looked at \(self.candidates.map(\.path))")
    }

    /// Runs `latchkey <arguments>` with `LATCHKEY_MASTER_KEY` set and no other `LATCHKEY_*` variable,
    /// in `workingDirectory` (so a forgotten `--database` cannot touch the repository).
    ///
    /// Spawned with `posix_spawn`, not Foundation's `Process`: on Linux (Swift 6.3.1) `Process.run()` crashes
    /// intermittently in a process with many open descriptors (a buffer over-read in
    /// `findMaximumOpenFromProcSelfFD`, swiftlang/swift-corelibs-foundation#5472), and these tests run
    /// servers, sockets and SQLite files side by side.
    static func run(_ arguments: [String], masterKey: String, workingDirectory: URL) async throws -> CLIRun {
        let executable = try self.executable().path
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
        environment["LATCHKEY_MASTER_KEY"] = masterKey

        // Files, not pipes: a pipe left unread fills up and blocks the child.
        let outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputDirectory) }
        let stdoutPath = outputDirectory.appendingPathComponent("stdout").path
        let stderrPath = outputDirectory.appendingPathComponent("stderr").path

        let pid = try self.spawn(
            executable, arguments: arguments, environment: environment.map { "\($0.key)=\($0.value)" },
            directory: workingDirectory.path, stdoutPath: stdoutPath, stderrPath: stderrPath)
        let exitCode = await self.waitForExit(pid)
        return CLIRun(
            arguments: arguments, exitCode: exitCode, stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")
    }

    /// Waits for `pid` to exit; returns its exit code, or 128 + the signal that ended it, as a shell reports it.
    static func waitForExit(_ pid: pid_t) async -> Int32 {
        // waitpid blocks: wait on a thread of its own, never on one of the concurrency pool's few threads.
        let status: Int32 = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    static func spawn(
        _ executable: String, arguments: [String], environment: [String], directory: String, stdoutPath: String, stderrPath: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #if os(Linux)
        // glibc has both (2.29, 2.34) but the Glibc module does not import these `_np` functions.
        let libc = dlopen(nil, RTLD_NOW)
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(libc, "posix_spawn_file_actions_addchdir_np") {
            _ = unsafeBitCast(symbol, to: AddChdir.self)(&actions, directory)
        }
        // The test process's sockets and database files are none of the child's business.
        if let symbol = dlsym(libc, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddClosefrom.self)(&actions, 3)
        }
        #else
        posix_spawn_file_actions_addchdir_np(&actions, directory)
        #endif

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw TestFailure("posix_spawn \(executable) failed: \(String(cString: strerror(result)))") }
        return pid
    }
}

extension TestServer {
    /// Runs `latchkey <arguments> --database <this server's database>` with this server's master key.
    func cli(_ arguments: String...) async throws -> CLIRun {
        try await LatchkeyCLI.run(arguments + ["--database", self.databasePath], masterKey: Self.masterKey, workingDirectory: self.directory)
    }
}
