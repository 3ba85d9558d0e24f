import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds or starts the one ``SMTPPeer`` of this test process.
actor SMTPPeerLauncher {
    static let shared = SMTPPeerLauncher()

    private var starting: Task<SMTPPeer, any Error>?

    func peer() async throws -> SMTPPeer {
        if let starting { return try await starting.value }
        let task = Task { try await Self.findOrStart() }
        self.starting = task
        return try await task.value
    }

    private static func findOrStart() async throws -> SMTPPeer {
        if let json = SMTPPeer.runningPeerJSON {
            return try JSONDecoder().decode(SMTPPeer.self, from: Data(json.utf8))
        }
        guard let python = SMTPPeer.python else { throw ProcessRunnerError("no SMTP peer configured") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-smtp-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = ProcessRunner.packageRoot.appendingPathComponent("Tests/interop/smtp_peer.py")
        let stdout = directory.appendingPathComponent("stdout")
        let stderr = directory.appendingPathComponent("stderr")
        let pid = try ProcessRunner.spawn(
            URL(fileURLWithPath: python),
            arguments: [
                script.path, "--ca-cert", directory.appendingPathComponent("ca.pem").path, "--username", "latchkey-test",
                "--password", "peer-password-\(UUID().uuidString.prefix(8))", "--slow-seconds", "5", "--exit-with-parent",
            ],
            environment: ProcessInfo.processInfo.environment,
            workingDirectory: directory,
            stdout: stdout,
            stderr: stderr
        )
        // Polling for the ready line: the peer generates its certificates first (well under a second).
        var exited = false
        for _ in 0..<300 {
            let output = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }) {
                return try JSONDecoder().decode(SMTPPeer.self, from: Data(line.dropFirst("ready ".count).utf8))
            }
            exited = ProcessRunner.hasExited(pid)
            if exited { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        if !exited { kill(pid, SIGKILL) }
        let log = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
        throw ProcessRunnerError("the SMTP peer did not start (\(python) \(script.path)):\n\(log.suffix(2000))")
    }
}
