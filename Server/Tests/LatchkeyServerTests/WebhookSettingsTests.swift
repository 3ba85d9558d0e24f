import Crypto
import Foundation
import LatchkeyTestSupport
import Testing

/// Issue 35's settings, through the real `latchkey` executable: `webhooks.endpoints` is a JSON array of objects in a
/// config file, checked at start (the key named, the secret never printed); `webhooks.retry-schedule` a JSON array of
/// seconds; `latchkey webhooks secret` needs no database; `config show` hides endpoint secrets and service keys.
@Suite struct WebhookSettingsTests {
    static let secret = "whsec_" + Data(repeating: 0x5a, count: 32).base64EncodedString()

    static func endpoint(
        name: String = "app", url: String = "https://backend.example.com/webhooks", secret: String = secret, events: String = #"["*"]"#
    )
        -> String
    {
        #"{"name": "\#(name)", "url": "\#(url)", "secret": "\#(secret)", "events": \#(events)}"#
    }

    static func check(_ file: String, environment: [String: String] = [:]) async throws -> CLIRun {
        try await ConfigurationCheckTests.run(["config", "check", "--config", "config.json"], environment: environment, files: ["config.json": file])
            .0
    }

    @Test func endpointsAsAnArrayOfObjectsAndARetryScheduleAsAnArrayOfSecondsAreAccepted() async throws {
        let file = #"""
            {"webhooks": {"endpoints": [\#(Self.endpoint()), \#(Self.endpoint(name: "audit", events: #"["user.created", "user.deleted", "session.revoked"]"#))],
             "retry-schedule": [1, 10, 100], "timeout": 3}}
            """#
        let run = try await Self.check(file)
        #expect(run.exitCode == 0, "\(run)")
        #expect(!run.stdout.contains(Self.secret) && !run.stderr.contains(Self.secret))
    }

    @Test(arguments: [
        ("no whsec_ prefix", String(WebhookSettingsTests.secret.dropFirst("whsec_".count))),
        ("under 24 bytes", "whsec_" + Data(repeating: 0x5a, count: 16).base64EncodedString()),
        ("not base64", "whsec_" + String(repeating: "!", count: 40)),
    ])
    func aBadSecretIsRefusedNamingTheKeyWithoutPrintingIt(problem: String, secret: String) async throws {
        let run = try await Self.check(#"{"webhooks": {"endpoints": [\#(Self.endpoint(secret: secret))]}}"#)
        #expect(run.exitCode == 78, "\(problem): \(run)")
        #expect(run.stderr.contains("webhooks.endpoints"), "\(problem): \(run)")
        #expect(!run.stderr.contains(secret) && !run.stdout.contains(secret), "\(problem): the secret was printed: \(run)")
    }

    @Test(arguments: ["not a url", "ftp://backend.example.com/hook", ""])
    func aBadURLIsRefused(url: String) async throws {
        let run = try await Self.check(#"{"webhooks": {"endpoints": [\#(Self.endpoint(url: url))]}}"#)
        #expect(run.exitCode == 78, "\(url): \(run)")
        #expect(run.stderr.contains("webhooks.endpoints"), "\(run)")
        #expect(!run.stderr.contains(Self.secret), "\(run)")
    }

    @Test func anUnknownEventTypeIsRefused() async throws {
        let run = try await Self.check(#"{"webhooks": {"endpoints": [\#(Self.endpoint(events: #"["user.created", "user.exploded"]"#))]}}"#)
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("webhooks.endpoints") && run.stderr.contains("events"), "\(run)")
        #expect(!run.stderr.contains(Self.secret), "\(run)")
    }

    @Test func twoEndpointsWithOneNameAreRefused() async throws {
        let run = try await Self.check(
            #"{"webhooks": {"endpoints": [\#(Self.endpoint()), \#(Self.endpoint(url: "https://other.example.com/hook"))]}}"#)
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("webhooks.endpoints"), "\(run)")
        #expect(run.stderr.contains("app"), "the duplicate name is named: \(run)")
        #expect(!run.stderr.contains(Self.secret), "\(run)")
    }

    @Test(arguments: [#"[5, -1]"#, #""5, 300""#, #"[5, "soon"]"#])
    func aBadRetryScheduleIsRefused(schedule: String) async throws {
        let run = try await Self.check(#"{"webhooks": {"retry-schedule": \#(schedule)}}"#)
        #expect(run.exitCode == 78, "\(schedule): \(run)")
        #expect(run.stderr.contains("webhooks.retry-schedule"), "\(run)")
    }

    @Test func serveRefusesABadEndpointAtStartWithoutPrintingTheSecret() async throws {
        let secret = "whsec_" + Data(repeating: 0x21, count: 8).base64EncodedString()
        let (run, directory) = try await ConfigurationCheckTests.run(
            ["serve", "--database", "db.sqlite", "--config", "config.json"],
            files: ["config.json": #"{"webhooks": {"endpoints": [\#(Self.endpoint(secret: secret))]}}"#])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("webhooks.endpoints"), "\(run)")
        #expect(!run.stderr.contains(secret) && !run.stdout.contains(secret), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path))
    }

    /// `latchkey webhooks secret`: a new `whsec_` secret of at least 24 random bytes, with no database anywhere.
    @Test func webhooksSecretPrintsANewSecretWithoutADatabase() async throws {
        let (first, directory) = try await ConfigurationCheckTests.run(["webhooks", "secret"])
        let (second, _) = try await ConfigurationCheckTests.run(["webhooks", "secret"])
        #expect(first.exitCode == 0 && second.exitCode == 0, "\(first) \(second)")
        let secrets = [first, second].map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
        for secret in secrets {
            #expect(secret.hasPrefix("whsec_"), "\(secret)")
            let key = Data(base64Encoded: String(secret.dropFirst("whsec_".count)))
            #expect((key?.count ?? 0) >= 24, "\(secret)")
        }
        #expect(secrets[0] != secrets[1])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "no database was created")
        // A secret it prints is one the settings accept.
        #expect(try await Self.check(#"{"webhooks": {"endpoints": [\#(Self.endpoint(secret: secrets[0]))]}}"#).exitCode == 0)
    }

    @Test func configShowHidesEndpointSecretsAndServiceKeys() async throws {
        let serviceKey = "backend-service-key-never-shown-0123456789"
        let rotated = "backend-rotated-key-never-shown-9876543210"
        let hookSecret = "whsec_" + Data(repeating: 0x33, count: 32).base64EncodedString()
        let file = #"""
            {"webhooks": {"endpoints": [\#(Self.endpoint())]},
             "backend": {"service-keys": [{"name": "2026-q3", "key": "\#(serviceKey)"}, {"name": "2026-q4", "key": "\#(rotated)"}]},
             "hooks": {"claims": {"url": "https://backend.example.com/claims", "secret": "\#(hookSecret)"}}}
            """#
        for arguments in [["config", "show", "--config", "config.json"], ["config", "show", "--json", "--config", "config.json"]] {
            let (run, _) = try await ConfigurationCheckTests.run(arguments, files: ["config.json": file])
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("webhooks.endpoints"), "\(run)")
            for secret in [Self.secret, String(Self.secret.dropFirst("whsec_".count)), serviceKey, rotated, hookSecret] {
                #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret), "\(arguments): a secret was shown: \(run)")
            }
        }
        let (single, _) = try await ConfigurationCheckTests.run(["config", "show"], environment: ["LATCHKEY_BACKEND_SERVICE_KEY": serviceKey])
        #expect(single.exitCode == 0, "\(single)")
        #expect(!single.stdout.contains(serviceKey), "\(single)")
        #expect(single.stdout.contains("backend.service-key"), "\(single)")
    }
}
