import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of an executable printed and how it exited.
public struct ProcessResult: Sendable, CustomStringConvertible {
    /// The executable's file name (for messages).
    public let name: String
    /// The arguments it was given (without the executable itself).
    public let arguments: [String]
    /// The exit code, or 128 + the signal that ended the process, as a shell reports it.
    public let exitCode: Int32
    /// Everything written to stdout.
    public let stdout: String
    /// Everything written to stderr.
    public let stderr: String

    public init(name: String, arguments: [String], exitCode: Int32, stdout: String, stderr: String) {
        self.name = name
        self.arguments = arguments
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The non-empty lines of stdout.
    public var stdoutLines: [String] { self.stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    /// The command, its exit code and both outputs: what a failing expectation should show.
    public var description: String {
        "\(self.name) \(self.arguments.joined(separator: " ")) → exit \(self.exitCode)\nstdout: \(self.stdout)\nstderr: \(self.stderr)"
    }
}

/// Why a process could not be found or started.
public struct ProcessRunnerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs the package's built executables as real, separate processes.
///
/// Processes are spawned with `posix_spawn`, not Foundation's `Process`: on Linux (Swift 6.3.1) `Process.run()` crashes
/// intermittently in a process with many open descriptors (a buffer over-read in `findMaximumOpenFromProcSelfFD`,
/// swiftlang/swift-corelibs-foundation#5472), and the tests run servers, sockets and SQLite files side by side.
/// The child gets stdin from `/dev/null` (or a file the caller names), stdout and stderr into files (never pipes: a pipe
/// left unread fills up and blocks the child), and on Linux none of the test process's other descriptors.
public enum ProcessRunner {
    /// The package root, found from this file's path (`<root>/Tests/LatchkeyTestSupport/ProcessRunner.swift`).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where the executable `name` may be: beside the test bundle, or in the package's debug build directory.
    public static func candidates(named name: String) -> [URL] {
        [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            self.packageRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
    }

    /// The built executable `name`; throws (so a test that needs it fails, never skips) when it is missing.
    public static func executable(named name: String) throws -> URL {
        let fileManager = FileManager.default
        for candidate in self.candidates(named: name) {
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                fileManager.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        throw ProcessRunnerError(
            "the \(name) executable was not found (build it first: swift build --build-tests); looked at \(self.candidates(named: name).map(\.path))")
    }

    /// This process's environment without the variables whose names start with `prefix`, so a child sees only the
    /// settings a test gives it.
    public static func inheritedEnvironment(removingPrefix prefix: String) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix(prefix) }
    }

    /// Runs `executable` with `arguments` and exactly `environment`, in `workingDirectory`, and waits for it to exit.
    ///
    /// The child reads `standardInput` (a file) on stdin, or `/dev/null` when it is `nil`.
    ///
    /// When `timeout` passes first the child is killed (SIGKILL) and the result's exit code is 137, so a hung child
    /// fails its test instead of hanging the suite.
    public static func run(
        _ executable: URL, arguments: [String], environment: [String: String], workingDirectory: URL, standardInput: URL? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> ProcessResult {
        let outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputDirectory) }
        let stdoutFile = outputDirectory.appendingPathComponent("stdout")
        let stderrFile = outputDirectory.appendingPathComponent("stderr")

        let pid = try self.spawn(
            executable, arguments: arguments, environment: environment, workingDirectory: workingDirectory, standardInput: standardInput,
            stdout: stdoutFile, stderr: stderrFile)
        let exitCode = await self.waitForExit(pid, timeout: timeout)
        return ProcessResult(
            name: executable.lastPathComponent, arguments: arguments, exitCode: exitCode,
            stdout: (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "")
    }

    /// Starts `executable` and returns its process ID without waiting; the caller must ``waitForExit(_:timeout:)``.
    ///
    /// stdin comes from the file `standardInput` (`/dev/null` when `nil`); stdout and stderr go to the files `stdout` and
    /// `stderr` (created or truncated, mode 0600).
    public static func spawn(
        _ executable: URL, arguments: [String], environment: [String: String], workingDirectory: URL, standardInput: URL? = nil, stdout: URL,
        stderr: URL
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput?.path ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #if os(Linux)
        // glibc has both (2.29, 2.34) but the Glibc module does not import these `_np` functions.
        let libc = dlopen(nil, RTLD_NOW)
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let chdirSymbol = dlsym(libc, "posix_spawn_file_actions_addchdir_np") else {
            throw ProcessRunnerError("posix_spawn_file_actions_addchdir_np is missing (glibc 2.29 or later is needed)")
        }
        _ = unsafeBitCast(chdirSymbol, to: AddChdir.self)(&actions, workingDirectory.path)
        // The test process's sockets and database files are none of the child's business.
        if let symbol = dlsym(libc, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddClosefrom.self)(&actions, 3)
        }
        #else
        posix_spawn_file_actions_addchdir_np(&actions, workingDirectory.path)
        #endif

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard result == 0 else { throw ProcessRunnerError("posix_spawn \(executable.path) failed: \(String(cString: strerror(result)))") }
        return pid
    }

    /// Waits for `pid` to exit and reaps it; returns its exit code, or 128 + the signal that ended it, as a shell reports it.
    ///
    /// With a `timeout`, a child still running when it passes is killed with SIGKILL (exit code 137).
    public static func waitForExit(_ pid: pid_t, timeout: Duration? = nil) async -> Int32 {
        let exited = ExitFlag()
        let killer = timeout.map { timeout in
            Task.detached {
                try? await Task.sleep(for: timeout)
                exited.ifRunning { kill(pid, SIGKILL) }
            }
        }
        defer { killer?.cancel() }
        // waitpid blocks: wait on a thread of its own, never on one of the concurrency pool's few threads.
        let status: Int32 = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                // Wait without reaping first, so the pid cannot be reused while the killer may still signal it.
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
                exited.markExited()
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Whether `pid` has exited, without waiting (reaping it if so).
    public static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// Whether a child has exited (but may not be reaped yet); guards the timeout's `kill` against a reused pid.
    private final class ExitFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var exited = false

        func markExited() { self.lock.withLock { self.exited = true } }
        func ifRunning(_ body: () -> Void) { self.lock.withLock { if !self.exited { body() } } }
    }
}
