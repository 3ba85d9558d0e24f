import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34's settings at start: `app-attest.roots` (PEM strings, or file paths) makes a `warning` naming it whenever it
/// is set; a policy other than off without `app-attest.app-ids` is refused; the policy's values are the four named.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestSpecSettingsTests {
    typealias Spec = AppAttestSpec

    /// Starts `latchkey serve` with `appAttest` as the config file's `app-attest` object, stops it, and returns its log.
    static func serveLog(appAttest: [String: Any]) async throws -> String {
        let port = try ServeCommandTests.freePort()
        let config = String(decoding: try JSONSerialization.data(withJSONObject: ["app-attest": appAttest]), as: UTF8.self)
        let server = try await ServeCommandTests.start(
            ["serve", "--config", "config.json", "--port", String(port)], port: port, files: ["config.json": config])
        #expect(await server.terminate() == 0, "log:\n\(server.log)")
        return server.log
    }

    static func rootsWarnings(_ log: String) -> [String] {
        log.split(separator: "\n").map(String.init).filter { $0.contains("warning") && $0.contains("app-attest.roots") }
    }

    /// The start says so whenever `app-attest.roots` is set (a `warning` line naming it), and not otherwise.
    @Test func settingRootsWarnsAtStart() async throws {
        let root = Spec.pem(try TestAttestationAuthority.der(try TestAttestationAuthority().root))
        let withRoots = try await Self.serveLog(appAttest: ["policy": "guests", "app-ids": [Spec.appID], "roots": [root]])
        #expect(Self.rootsWarnings(withRoots).count == 1, "log:\n\(withRoots)")
        #expect(!withRoots.contains(root), "the log quotes the root")
        let without = try await Self.serveLog(appAttest: ["policy": "guests", "app-ids": [Spec.appID]])
        #expect(Self.rootsWarnings(without).isEmpty, "log:\n\(without)")
    }

    /// Without `app-attest.roots` only Apple's root is trusted: the stand-in CA's attestation is refused.
    @Test func withoutRootsTheStandInCAIsNotTrusted() async throws {
        var settings = Spec.baseSettings
        settings["app-attest.policy"] = "guests"
        let configuration = try await Spec.configuration(settings)
        let server = try await TestServer.make(clock: ManualClock(start: TestAttestationAuthority.now)) { Spec.adopt(configuration, into: &$0) }
        let authority = try TestAttestationAuthority()
        try await server.test(.live) { client in
            let spec = Spec(client: client, server: server, authority: authority)
            let response = try await spec.register(UUID(), try await spec.evidence(Spec.Device()))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidAttestation, "\(response.text)")
        }
    }

    /// An entry that does not start with `-----BEGIN` is a file path.
    @Test func aRootsEntryMayBeAFilePath() async throws {
        let authority = try TestAttestationAuthority()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-app-attest-root-\(UUID().uuidString).pem")
        try Spec.pem(try TestAttestationAuthority.der(authority.root)).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await Spec.with(["app-attest.roots": [file.path]], authority: authority) { spec in
            let response = try await spec.register(UUID(), try await spec.evidence(Spec.Device()))
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test(arguments: ["report", "guests", "required"])
    func aPolicyWithoutAppIDsIsRefusedAtStart(policy: String) async throws {
        var settings = Spec.baseSettings
        settings["app-attest.app-ids"] = nil
        settings["app-attest.policy"] = policy
        do {
            let configuration = try await Spec.configuration(settings)
            let server = try await TestServer.make { Spec.adopt(configuration, into: &$0) }
            await server.close()
            Issue.record("policy \(policy) without app IDs started")
        } catch {
            #expect("\(error)".contains("app-attest.app-ids"), "\(error)")
        }
    }

    /// As every other setting, by every command: exit 78 naming the key.
    @Test func theCLIRefusesAPolicyWithoutAppIDs() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(["config", "check"], environment: ["LATCHKEY_APP_ATTEST_POLICY": "guests"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("app-attest.app-ids"), "\(run)")
        let (fine, _) = try await ConfigurationCheckTests.run(
            ["config", "check"], environment: ["LATCHKEY_APP_ATTEST_POLICY": "guests", "LATCHKEY_APP_ATTEST_APP_IDS": Spec.appID])
        #expect(fine.exitCode == 0, "\(fine)")
    }

    @Test func aPolicyThatIsNoneOfTheFourIsRefused() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check"], environment: ["LATCHKEY_APP_ATTEST_POLICY": "strict", "LATCHKEY_APP_ATTEST_APP_IDS": Spec.appID])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("app-attest.policy"), "\(run)")
    }

    /// The settings reference lists every App Attest setting by its name in the issue.
    @Test func theSettingsReferenceNamesEveryAppAttestSetting() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(["config", "reference"])
        #expect(run.exitCode == 0, "\(run)")
        for key in [
            "app-attest.policy", "app-attest.app-ids", "app-attest.environment", "app-attest.roots", "app-attest.allow-debug-tokens",
            "app-attest.unattested-guest-limit", "limits.app-attest", "limits.app-attest-challenge",
        ] {
            #expect(run.stdout.contains(key), "\(key) is not in the settings reference")
        }
    }
}
