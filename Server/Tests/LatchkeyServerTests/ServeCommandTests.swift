import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `latchkey serve` as a person runs it: settings from a config file, the environment and the command line,
/// first start on an empty directory, graceful shutdown on SIGTERM.
@Suite struct ServeCommandTests {
    /// A running `latchkey serve` process.
    struct ServerProcess {
        let pid: pid_t
        let port: Int
        let directory: URL
        var baseURL: URL { URL(string: "http://127.0.0.1:\(self.port)")! }

        func get(_ path: String) async throws -> (Int, Data) {
            let (data, response) = try await URLSession.shared.data(from: self.baseURL.appendingPathComponent(path))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
        }

        func post(_ path: String, json: String) async throws -> (Int, Data) {
            var request = URLRequest(url: self.baseURL.appendingPathComponent(path))
            request.httpMethod = "POST"
            request.httpBody = Data(json.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
        }

        /// SIGTERM, then the exit code.
        func terminate() async -> Int32 {
            kill(self.pid, SIGTERM)
            return await LatchkeyCLI.waitForExit(self.pid)
        }

        var log: String { (try? String(contentsOf: self.directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }
    }

    /// Starts `latchkey <arguments>` in a fresh directory and waits (bounded) until it answers health checks.
    static func start(
        _ arguments: [String], environment extra: [String: String] = [:], port: Int, files: [String: String] = [:]
    ) async throws
        -> ServerProcess
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, contents) in files { try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let pid = try ProcessRunner.spawn(
            try LatchkeyCLI.executable(), arguments: arguments, environment: LatchkeyCLI.environment(extra), workingDirectory: directory,
            stdout: directory.appendingPathComponent("stdout"), stderr: directory.appendingPathComponent("stderr"))
        let server = ServerProcess(pid: pid, port: port, directory: directory)
        // Waiting for another process to start listening: poll readiness, bounded to about 20 s.
        for _ in 0..<200 {
            if let (status, _) = try? await server.get("api/v1/health"), status == 200 { return server }
            try await Task.sleep(for: .milliseconds(100))
        }
        _ = await server.terminate()
        throw TestFailure("latchkey serve did not answer on port \(port); log:\n\(server.log)")
    }

    /// A port nothing listens on (bound and released by the kernel's choice).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func firstStartCreatesTheDatabaseAndAKeyFileWithMode0600AndStopsCleanlyOnSIGTERM() async throws {
        let port = try Self.freePort()
        let server = try await Self.start(["serve", "--port", String(port)], port: port)
        let (status, _) = try await server.post("api/v1/auth/register-device", json: #"{"device_id":"\#(UUID().uuidString)"}"#)
        #expect(status == 201)
        let keyFile = server.directory.appendingPathComponent("latchkey.sqlite.key").path
        #expect(FileManager.default.fileExists(atPath: server.directory.appendingPathComponent("latchkey.sqlite").path))
        let permissions = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(await server.terminate() == 0, "log:\n\(server.log)")
    }

    @Test func settingsComeFromTheConfigFileTheEnvironmentAndTheCommandLineInThatOrderOfPrecedence() async throws {
        let port = try Self.freePort()
        let config = #"{"port": 1, "public-url": "http://from-file.test", "tokens": {"session-lifetime": 1234}}"#
        let server = try await Self.start(
            ["serve", "--config", "config.json", "--port", String(port)],
            environment: ["LATCHKEY_PORT": "2", "LATCHKEY_PUBLIC_URL": "http://from-env.test"], port: port, files: ["config.json": config])
        let (_, body) = try await server.post("api/v1/auth/register-device", json: #"{"device_id":"\#(UUID().uuidString)"}"#)
        let tokens = try JSONDecoder().decode(TokenPairResponse.self, from: body)
        #expect(tokens.expiresIn == 1234)  // only the file sets it
        let (_, discovery) = try await server.get(".well-known/openid-configuration")
        let issuer = try JSONSerialization.jsonObject(with: discovery) as? [String: Any]
        #expect(issuer?["issuer"] as? String == "http://from-env.test")  // the environment beats the file
        #expect(await server.terminate() == 0)
    }

    @Test func aMalformedMasterKeyStopsTheServerWithAMessageThatDoesNotQuoteIt() async throws {
        let port = try Self.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let run = try await LatchkeyCLI.run(
            ["serve", "--port", String(port), "--database", directory.appendingPathComponent("db.sqlite").path],
            masterKey: "not-base64-secret-value", workingDirectory: directory)
        #expect(run.exitCode != 0)
        #expect(run.stderr.contains("master key"))
        #expect(!run.stderr.contains("not-base64-secret-value"))
    }
}

extension ServeCommandTests {
    @Test func aDifferentMasterKeyStopsTheServerWithAMessageSayingSo() async throws {
        let first = try await TestServer.make()
        await first.close()
        let other = Data(repeating: 9, count: 32).base64EncodedString()
        let run = try await LatchkeyCLI.run(
            ["serve", "--port", String(try Self.freePort()), "--database", first.databasePath], masterKey: other,
            workingDirectory: first.directory)
        #expect(run.exitCode != 0)
        #expect(run.stderr.contains("master key cannot open signing key"), "\(run)")
        #expect(!run.stderr.contains(other))
    }
}

extension ServeCommandTests {
    static let intervalSettings = [
        "LATCHKEY_KEYS_RELOAD_INTERVAL": "keys.reload-interval", "LATCHKEY_REVOCATIONS_POLL_INTERVAL": "revocations.poll-interval",
        "LATCHKEY_PRUNE_INTERVAL": "prune.interval",
    ]

    /// An interval of 0 would make a background service return at once, which ends the ServiceGroup and the
    /// server with it; the server refuses such settings before it listens, and says which one.
    @Test(arguments: Self.intervalSettings)
    func anIntervalOfZeroIsRefusedAtStartWithAClearMessage(variable: String, key: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await LatchkeyCLI.run(
            ["serve", "--port", String(try Self.freePort()), "--database", directory.appendingPathComponent("db.sqlite").path],
            masterKey: Data(repeating: 3, count: 32).base64EncodedString(), workingDirectory: directory, environment: [variable: "0"])
        #expect(run.exitCode == 78)
        #expect(run.stderr.contains("error: \(key) = 0 (environment \(variable)): must be a number of seconds above 0"), "\(run)")
    }
}

extension ServeCommandTests {
    /// Issue 29: the start-up line names the version and the features on, and a loopback public URL is warned about
    /// when the console (or email, or Apple) would put it in links.
    @Test func theStartUpLineNamesTheFeaturesAndWarnsOfALoopbackPublicURL() async throws {
        let port = try Self.freePort()
        let server = try await Self.start(["serve", "--port", String(port)], environment: ["LATCHKEY_ADMIN_ENABLED": "true"], port: port)
        let log = server.log
        #expect(await server.terminate() == 0)
        #expect(log.contains("version=\(LatchkeyVersion.current)"), "\(log)")
        for feature in ["console=on", "email=off", "apple=off", "providers=none", "storage=off", "events=on", "metrics=off"] {
            #expect(log.contains(feature), "\(feature): \(log)")
        }
        #expect(log.contains("public-url is http://127.0.0.1:\(port), a loopback address, while the console (its links) is on"), "\(log)")

        let quiet = try await Self.start(["serve", "--port", String(port)], port: port)
        let quietLog = quiet.log
        #expect(await quiet.terminate() == 0)
        #expect(!quietLog.contains("a loopback address"), "\(quietLog)")
    }
}
