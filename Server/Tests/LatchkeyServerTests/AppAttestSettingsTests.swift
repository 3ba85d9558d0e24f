import Foundation
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing
import X509

/// The App Attest settings: read as documented, settings that cannot work refused at start (exit 78 naming the key),
/// and a warning whenever `app-attest.roots` is set.
@Suite struct AppAttestSettingsTests {
    @Test func theSettingsAreReadFromTheEnvironment() async throws {
        let configuration = try await LatchkeyConfiguration.load(
            overrides: [:], configFile: nil,
            environment: [
                "LATCHKEY_APP_ATTEST_POLICY": "guests", "LATCHKEY_APP_ATTEST_APP_IDS": "ABCDE12345.com.example.app",
                "LATCHKEY_APP_ATTEST_ENVIRONMENT": "development", "LATCHKEY_APP_ATTEST_ALLOW_DEBUG_TOKENS": "true",
                "LATCHKEY_APP_ATTEST_UNATTESTED_GUEST_LIMIT": "1", "LATCHKEY_LIMITS_APP_ATTEST_LIMIT": "7",
                "LATCHKEY_LIMITS_APP_ATTEST_CHALLENGE_WINDOW": "60",
            ])
        let appAttest = configuration.appAttest
        #expect(appAttest.policy == .guests && appAttest.appIDs == ["ABCDE12345.com.example.app"] && appAttest.environment == .development)
        #expect(appAttest.allowDebugTokens && appAttest.unattestedGuestLimit == 1)
        #expect(appAttest.limit.limit == 7 && appAttest.challengeLimit.window == 60)
    }

    @Test func theDefaultsAreOff() {
        let appAttest = LatchkeyConfiguration().appAttest
        #expect(appAttest.policy == .off && appAttest.environment == .production && !appAttest.allowDebugTokens)
        #expect(appAttest.unattestedGuestLimit == nil && appAttest.roots.isEmpty)
    }

    @Test(arguments: [
        (["LATCHKEY_APP_ATTEST_POLICY": "guests"], "app-attest.app-ids"),
        (["LATCHKEY_APP_ATTEST_POLICY": "sometimes"], "app-attest.policy"),
        (["LATCHKEY_APP_ATTEST_APP_IDS": "com.example.app"], "app-attest.app-ids"),
        (["LATCHKEY_APP_ATTEST_ENVIRONMENT": "sandbox"], "app-attest.environment"),
        (["LATCHKEY_APP_ATTEST_ROOTS": "/nonexistent/root.pem"], "app-attest.roots"),
        (["LATCHKEY_APP_ATTEST_UNATTESTED_GUEST_LIMIT": "0"], "app-attest.unattested-guest-limit"),
    ])
    func settingsThatCannotWorkAreRefusedNamingTheKey(_ environment: [String: String], key: String) async throws {
        let (run, _) = try await ConfigurationCheckTests.run(["config", "check"], environment: environment)
        #expect(run.exitCode == 78, "\(run)")
        #expect(ConfigurationCheckTests.problems(of: run).first?.hasPrefix("error: \(key)") == true, "\(run)")
    }

    @Test func serveWarnsAtStartWhenRootsAreSetAndAnswersChallenges() async throws {
        let pem = try TestAttestationAuthority().root.serializeAsPEM().pemString
        let port = try ServeCommandTests.freePort()
        let server = try await ServeCommandTests.start(
            ["serve", "--port", String(port)],
            environment: [
                "LATCHKEY_APP_ATTEST_POLICY": "guests", "LATCHKEY_APP_ATTEST_APP_IDS": TestAttestationAuthority.appID,
                "LATCHKEY_APP_ATTEST_ROOTS": "root.pem",
            ], port: port, files: ["root.pem": pem])
        let (status, _) = try await server.post("api/v1/app-attest/challenge", json: "")
        let log = server.log
        #expect(await server.terminate() == 0)
        #expect(status == 200)
        #expect(log.contains("warning") && log.contains("app-attest.roots is set"), "\(log)")
    }

    @Test func rootsAsPEMTextOrAFilePathAreReadAndWarnedAbout() throws {
        let authority = try TestAttestationAuthority()
        let pem = try authority.root.serializeAsPEM().pemString
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("aa-root-\(UUID().uuidString).pem")
        try pem.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var configuration = LatchkeyConfiguration()
        configuration.publicURL = "https://auth.example.com"
        #expect(!configuration.startupWarnings.contains { $0.contains("app-attest.roots") })
        configuration.appAttest.roots = [pem, file.path]
        try LatchkeyServices.validate(configuration)
        #expect(configuration.startupWarnings.contains { $0.hasPrefix("app-attest.roots") })
    }
}
