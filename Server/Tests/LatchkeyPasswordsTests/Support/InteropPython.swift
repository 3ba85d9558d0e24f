import Foundation
import LatchkeyTestSupport
import Testing

/// `Tests/interop/argon2_vectors.py` run by the python that `LATCHKEY_TEST_PYTHON` names (one with argon2-cffi).
enum InteropPython {
    static let executable: URL? = {
        guard let name = ProcessInfo.processInfo.environment["LATCHKEY_TEST_PYTHON"], !name.isEmpty else { return nil }
        if name.contains("/") { return URL(fileURLWithPath: name) }
        // A bare name ("python3"): posix_spawn needs a path.
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return directories.map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static let isConfigured = executable != nil
    static let skipReason: Comment = "set LATCHKEY_TEST_PYTHON to a python with argon2-cffi installed (pip install argon2-cffi)"

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("interop/argon2_vectors.py")

    /// Runs the script with `arguments` and decodes the JSON it prints.
    static func run<Answer: Decodable>(_ arguments: [String], as answer: Answer.Type) async throws -> Answer {
        guard let executable else { throw ProcessRunnerError("LATCHKEY_TEST_PYTHON is not set") }
        let result = try await ProcessRunner.run(
            executable,
            arguments: [self.script.path] + arguments,
            environment: ProcessInfo.processInfo.environment,
            workingDirectory: self.script.deletingLastPathComponent(),
            timeout: .seconds(300)
        )
        guard result.exitCode == 0 else { throw ProcessRunnerError("argon2_vectors.py failed: \(result)") }
        return try JSONDecoder().decode(Answer.self, from: Data(result.stdout.utf8))
    }
}
