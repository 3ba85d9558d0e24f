import Foundation
import LatchkeyTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `latchkey-device` run that goes on while the test acts (`watch`): its output is read as it is written.
struct RunningDeviceApp: Sendable {
    let pid: pid_t
    let stdout: URL
    let stderr: URL

    /// The `index`th line of stdout (from 0), once written; kills the child and throws with both outputs when it is not
    /// written within 20 seconds.
    func line(_ index: Int) async throws -> String {
        for _ in 0..<2_000 {
            let lines = self.output.split(separator: "\n", omittingEmptySubsequences: true)
            if lines.count > index, self.output.hasSuffix("\n") || lines.count > index + 1 { return String(lines[index]) }
            try await Task.sleep(for: .milliseconds(10))  // the child's output, not time, is awaited
        }
        kill(self.pid, SIGKILL)  // so a failing test leaves no child behind
        _ = await self.exit()
        throw ProcessRunnerError("no line \(index) from latchkey-device: stdout \(self.output) stderr \(self.errors)")
    }

    /// Waits (30 seconds at most, then kills it) and returns the exit code.
    func exit() async -> Int32 { await ProcessRunner.waitForExit(self.pid, timeout: .seconds(30)) }

    var output: String { (try? String(contentsOf: self.stdout, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOf: self.stderr, encoding: .utf8)) ?? "" }
}

extension DeviceApp {
    /// Starts `latchkey-device --server <server> --state <state> <arguments>` without waiting for it; the test must
    /// ``RunningDeviceApp/exit()`` it.
    func start(_ arguments: String...) throws -> RunningDeviceApp {
        var environment = ProcessRunner.inheritedEnvironment(removingPrefix: "LATCHKEY_")
        environment["HOME"] = self.directory.appendingPathComponent("home").path
        let stdout = self.directory.appendingPathComponent("stdout-\(UUID().uuidString)")
        let stderr = self.directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        let pid = try ProcessRunner.spawn(
            try ProcessRunner.executable(named: "latchkey-device"),
            arguments: ["--server", self.server.absoluteString, "--state", self.stateDirectory.path] + arguments, environment: environment,
            workingDirectory: self.directory, stdout: stdout, stderr: stderr)
        return RunningDeviceApp(pid: pid, stdout: stdout, stderr: stderr)
    }
}
