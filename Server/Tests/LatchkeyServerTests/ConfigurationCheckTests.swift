import Foundation
import LatchkeyAPI
import LatchkeyTestSupport
import Testing

/// Issue 29, "Configured right, or not at all": settings are checked at start and refused with the key, where it came
/// from and what is allowed (exit 78), by `serve`, `config check` and every other command; `config show` lists them.
@Suite struct ConfigurationCheckTests {
    static let masterKey = Data(repeating: 5, count: 32).base64EncodedString()

    /// Runs `latchkey <arguments>` in a fresh directory holding `files`, with `environment` (and the master key).
    static func run(_ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]) async throws -> (CLIRun, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, contents) in files { try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let run = try await LatchkeyCLI.run(arguments, masterKey: Self.masterKey, workingDirectory: directory, environment: environment)
        return (run, directory)
    }

    static func problems(of run: CLIRun) -> [String] { run.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("error: ") } }

    @Test func anUnknownKeyInTheFileIsRefusedWithTheClosestSettingAsASuggestion() async throws {
        let (run, _) = try await Self.run(["config", "check", "--config", "config.json"], files: ["config.json": #"{"prot": 9000}"#])
        #expect(run.exitCode == 78, "\(run)")
        let path = "config.json"  // as given
        #expect(Self.problems(of: run) == ["error: prot (file \(path)): not a setting; did you mean port?"], "\(run)")
    }

    @Test func anUnknownNestedKeyIsRefusedToo() async throws {
        let (run, _) = try await Self.run(
            ["config", "check", "--config", "config.json"], files: ["config.json": #"{"tokens": {"session-lifetme": 60}}"#])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("tokens.session-lifetme (file "), "\(run)")
        #expect(run.stderr.contains("did you mean tokens.session-lifetime?"), "\(run)")
    }

    @Test func anUnknownLatchkeyVariableIsRefusedWithTheClosestVariable() async throws {
        let (run, _) = try await Self.run(["config", "check"], environment: ["LATCHKEY_TOKENS_SESION_LIFETIME": "60"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(
            Self.problems(of: run) == [
                "error: LATCHKEY_TOKENS_SESION_LIFETIME (environment): not a setting; did you mean LATCHKEY_TOKENS_SESSION_LIFETIME?"
            ], "\(run)")
    }

    @Test func aStringWhereTheFileNeedsANumberIsRefused() async throws {
        let (run, _) = try await Self.run(["config", "check", "--config", "config.json"], files: ["config.json": #"{"port": "9005"}"#])
        #expect(run.exitCode == 78, "\(run)")
        let path = "config.json"  // as given
        #expect(Self.problems(of: run) == [#"error: port = "9005" (file \#(path)): must be a whole number"#], "\(run)")
    }

    @Test func aVariableThatIsNotANumberIsRefused() async throws {
        let (run, _) = try await Self.run(["config", "check"], environment: ["LATCHKEY_PORT": "abc"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(Self.problems(of: run) == [#"error: port = "abc" (environment LATCHKEY_PORT): must be a whole number"#], "\(run)")
    }

    @Test func outOfRangeValuesAreRefusedEachWithItsSource() async throws {
        let (run, _) = try await Self.run(
            ["config", "check", "--config", "config.json", "--port", "70000"],
            environment: ["LATCHKEY_TOKENS_REFRESH_LIFETIME": "0", "LATCHKEY_LOG_LEVEL": "loud"],
            files: ["config.json": #"{"tokens": {"session-lifetime": -5}}"#])
        #expect(run.exitCode == 78, "\(run)")
        let path = "config.json"  // as given
        #expect(
            Self.problems(of: run) == [
                "error: log-level = \"loud\" (environment LATCHKEY_LOG_LEVEL): must be one of trace, debug, info, notice, warning, error, critical",
                "error: port = 70000 (flag --port): must be a port from 1 to 65535 (0: any free port)",
                "error: tokens.refresh-lifetime = 0 (environment LATCHKEY_TOKENS_REFRESH_LIFETIME): must be a number of seconds above 0",
                "error: tokens.session-lifetime = -5 (file \(path)): must be a number of seconds above 0",
            ], "\(run)")
    }

    @Test func aFileThatIsNotJSONIsRefusedWithItsNameAndTheLine() async throws {
        let (run, _) = try await Self.run(
            ["config", "check", "--config", "config.json"], files: ["config.json": "{\n  \"port\": 9000,\n  \"host\": \n}\n"])
        #expect(run.exitCode == 78, "\(run)")
        let path = "config.json"  // as given
        let problems = Self.problems(of: run)
        #expect(problems.count == 1, "\(run)")
        #expect(problems.first?.hasPrefix("error: \(path): not valid JSON at line 4") == true, "\(run)")
    }

    @Test func aMissingConfigFileIsRefusedWithItsName() async throws {
        let (run, _) = try await Self.run(["config", "check", "--config", "/nonexistent/latchkey.json"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("error: /nonexistent/latchkey.json: cannot read the configuration file"), "\(run)")
    }

    @Test func serveRefusesAWrongSettingWithExit78BeforeCreatingAnything() async throws {
        let (run, directory) = try await Self.run(["serve", "--database", "db.sqlite"], environment: ["LATCHKEY_PORT": "abc"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains(#"error: port = "abc" (environment LATCHKEY_PORT): must be a whole number"#), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path))
    }

    @Test func aSettingThatParsesButContradictsAnotherExits78Too() async throws {
        let (run, _) = try await Self.run(["config", "check"], environment: ["LATCHKEY_GUEST_AUDIENCE": "latchkey"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("error: guest-audience must differ from audience"), "\(run)")
    }

    @Test func aProviderMissingItsIssuerIsNamedAndItsOtherKeysAreNotCalledUnknown() async throws {
        let (run, _) = try await Self.run(
            ["config", "check"],
            environment: [
                "LATCHKEY_PROVIDERS_NAMES": "clerk", "LATCHKEY_PROVIDERS_CLERK_JWKS_URL": "https://clerk.example.com/.well-known/jwks.json",
                "LATCHKEY_PROVIDERS_CLERK_AUDIENCES": "any", "LATCHKEY_PROVIDERS_CLERK_AUTHORIZED_PARTIES": "https://app.example.com",
            ])
        #expect(run.exitCode == 78, "\(run)")
        #expect(Self.problems(of: run) == ["error: providers.clerk.issuer is missing"], "\(run)")
    }

    @Test func anUnreadableApplePrivateKeyFileIsRefused() async throws {
        let (run, _) = try await Self.run(
            ["config", "check"],
            environment: ["LATCHKEY_APPLE_CLIENT_IDS": "com.example.app", "LATCHKEY_APPLE_PRIVATE_KEY_FILE": "/nonexistent/AuthKey.p8"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("error: apple.private-key-file: cannot read /nonexistent/AuthKey.p8"), "\(run)")
    }

    @Test func rightSettingsPassTheCheckSilently() async throws {
        let (run, _) = try await Self.run(
            ["config", "check", "--config", "config.json"], environment: ["LATCHKEY_PORT": "9001"],
            files: [
                "config.json":
                    #"{"tokens": {"session-lifetime": 600}, "database.timeout": 3, "meters": {"names": ["uploads"], "uploads": {"user-limit": 5}}}"#
            ])
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.isEmpty, "\(run)")
    }

    @Test func configShowListsEachSettingWithItsSourceAndNeverASecret() async throws {
        let secret = "smtp-password-never-shown"
        let (run, _) = try await Self.run(
            ["config", "show", "--config", "config.json", "--host", "0.0.0.0"],
            environment: ["LATCHKEY_PORT": "9001", "LATCHKEY_SMTP_PASSWORD": secret],
            files: ["config.json": #"{"tokens": {"session-lifetime": 600}}"#])
        #expect(run.exitCode == 0, "\(run)")
        let path = "config.json"  // as given
        let rows = Dictionary(
            run.stdoutLines.map { line in
                let parts = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                return (parts[0], parts.dropFirst().joined(separator: " "))
            }, uniquingKeysWith: { first, _ in first })
        #expect(rows["host"] == #""0.0.0.0" (flag --host)"#, "\(run)")
        #expect(rows["port"] == "9001 (environment LATCHKEY_PORT)", "\(run)")
        #expect(rows["tokens.session-lifetime"] == "600 (file \(path))", "\(run)")
        #expect(rows["tokens.refresh-lifetime"] == "2592000 (default)", "\(run)")
        #expect(rows["smtp.password"] == "<set> (environment LATCHKEY_SMTP_PASSWORD)", "\(run)")
        #expect(rows["master-key"] == "<set> (environment LATCHKEY_MASTER_KEY)", "\(run)")
        #expect(!run.stdout.contains(secret) && !run.stdout.contains(Self.masterKey), "\(run)")

        let (json, _) = try await Self.run(["config", "show", "--json"], environment: ["LATCHKEY_PORT": "9001"])
        #expect(json.exitCode == 0, "\(json)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
        #expect(objects.contains { $0 == ["key": "port", "value": "9001", "source": "environment LATCHKEY_PORT"] }, "\(json)")
    }
}

/// Issue 29, "Operated safely": the support CLI says which database it opened and never creates one; destructive
/// commands ask or take `--yes`; lists take `--json`; one exit-code scheme.
@Suite struct SupportCommandSafetyTests {
    @Test func aCommandOnAPathWithNoDatabaseFailsAndCreatesNothing() async throws {
        let (run, directory) = try await ConfigurationCheckTests.run(["users", "list", "--database", "missing.sqlite"])
        #expect(run.exitCode == 1, "\(run)")
        #expect(run.stderr.contains("error: no database at missing.sqlite (use --database"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("missing.sqlite").path))
    }

    @Test func aCommandSaysWhichDatabaseItOpened() async throws {
        let server = try await TestServer.make()
        let run = try await server.cli("users", "list")
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stderr.contains("latchkey: database \(server.databasePath)"), "\(run)")
    }

    @Test func deletingAUserWithoutATerminalNeedsYes() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let refused = try await server.cli("users", "delete", device.userID)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("add --yes to confirm"), "\(refused)")
            #expect(try await server.services.users.user(id: device.userID) != nil)
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            #expect(try await server.services.users.user(id: device.userID) == nil)
        }
    }

    @Test func revokingAKeyWithoutATerminalNeedsYesAndAnUnknownKidExits3() async throws {
        let server = try await TestServer.make()
        // A kid is an RFC 7638 thumbprint (base64url): one in 64 begins with "-", which the command line reads as an
        // option (a known problem, see the closing note). This test is about --yes and unknown kids: take a key without one.
        var kid = try await server.services.keyRing.records().map(\.kid).first { !$0.hasPrefix("-") }
        for _ in 0..<8 where kid == nil {
            _ = try await server.services.keyRing.rotate()
            kid = try await server.services.keyRing.records().map(\.kid).first { !$0.hasPrefix("-") }
        }
        let refused = try await server.cli("keys", "revoke", try #require(kid))
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(try await server.services.keyRing.records().first?.revokedAt == nil)
        let unknown = try await server.cli("keys", "revoke", "no-such-kid", "--yes")
        #expect(unknown.exitCode == 3, "\(unknown)")
        #expect(unknown.stderr.contains("error: no signing key with kid no-such-kid"), "\(unknown)")
    }

    @Test func anUnknownUserExits3AndAUsageErrorExits2() async throws {
        let server = try await TestServer.make()
        let missing = try await server.cli("users", "show", UUID().uuidString)
        #expect(missing.exitCode == 3, "\(missing)")
        #expect(missing.stderr.contains("error: No user with ID"), "\(missing)")
        let usage = try await server.cli("users", "show")
        #expect(usage.exitCode == 2, "\(usage)")
    }

    @Test func listsAndShowsPrintJSON() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let users = try await server.cli("users", "list", "--json")
            #expect(users.exitCode == 0, "\(users)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(users.stdout.utf8)) as? [[String: Any]])
            #expect(rows.contains { $0["id"] as? String == device.userID && $0["kind"] as? String == "device" }, "\(users)")
            let show = try await server.cli("users", "show", device.userID, "--json")
            let user = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
            #expect(user["id"] as? String == device.userID)
            #expect((user["devices"] as? [[String: Any]])?.count == 1)
            for command in [["keys", "list"], ["access-code", "list"], ["admin", "list"], ["audit", "list"], ["outbox", "list"]] {
                let run = try await server.cli(command + ["--json"])
                #expect(run.exitCode == 0, "\(run)")
                #expect((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) is [Any], "\(command): \(run)")
            }
        }
    }

    /// The README's master-key recipe works as written: the file is private from the first instant and never overwritten.
    @Test func newMasterKeyWritesAPrivateFileAServerAccepts() async throws {
        let (made, directory) = try await ConfigurationCheckTests.run(["keys", "new-master-key", "--output", "master.key"])
        #expect(made.exitCode == 0, "\(made)")
        let path = directory.appendingPathComponent("master.key").path
        #expect(BackupTests.mode(path) == 0o600)
        let key = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Data(base64Encoded: key.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
        let again = try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: ["keys", "new-master-key", "--output", "master.key"], environment: LatchkeyCLI.environment(),
            workingDirectory: directory)
        #expect(again.exitCode == 1, "\(again)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == key)
        let migrate = try await ProcessRunner.run(
            try LatchkeyCLI.executable(), arguments: ["migrate", "--database", "db.sqlite"],
            environment: LatchkeyCLI.environment(["LATCHKEY_MASTER_KEY_FILE": path]), workingDirectory: directory)
        #expect(migrate.exitCode == 0, "\(migrate)")
    }

    @Test func versionIsOneConstantEverywhere() async throws {
        let (run, directory) = try await ConfigurationCheckTests.run(["--version"])
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == LatchkeyVersion.current, "\(run)")
        let device = try await ProcessRunner.run(
            try ProcessRunner.executable(named: "latchkey-device"), arguments: ["--version"], environment: LatchkeyCLI.environment(),
            workingDirectory: directory)
        #expect(device.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == LatchkeyVersion.current, "\(device)")
        #expect(LatchkeyVersion.current == "0.9.0")
    }
}
