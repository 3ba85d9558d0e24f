import Foundation
import LatchkeyTestSupport
import Testing

/// `hooks.claims.*` and `backend.service-key` at start: a mode that is none, or a hook without its secret, is refused
/// (exit 78) naming the key and never a secret's value.
@Suite struct ClaimsSettingsTests {
    @Test func anOnFailureModeThatIsNoneIsRefused() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(["config", "check"], environment: ["LATCHKEY_HOOKS_CLAIMS_ON_FAILURE": "retry"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("hooks.claims.on-failure must be omit or refuse"), "\(run)")
    }

    @Test func aHookWithoutAValidSecretIsRefusedWithoutShowingIt() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check"],
            environment: ["LATCHKEY_HOOKS_CLAIMS_URL": "http://127.0.0.1:9/hook", "LATCHKEY_HOOKS_CLAIMS_SECRET": "not-a-whsec-secret"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("hooks.claims.secret must be whsec_"), "\(run)")
        #expect(!run.stderr.contains("not-a-whsec-secret") && !run.stdout.contains("not-a-whsec-secret"), "\(run)")
    }

    @Test func aHookOverPlainHTTPToAnotherHostIsRefused() async throws {
        let secret = "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check"],
            environment: ["LATCHKEY_HOOKS_CLAIMS_URL": "http://hooks.example.com/claims", "LATCHKEY_HOOKS_CLAIMS_SECRET": secret])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("hooks.claims.url must be an https URL"), "\(run)")
        #expect(!run.stderr.contains(secret), "\(run)")
    }

    @Test func theBackendKeyIsASecretTheConfigurationNeverShows() async throws {
        let key = "backend-key-never-shown-0123456789"
        let (run, _) = try await ConfigurationCheckTests.run(["config", "show"], environment: ["LATCHKEY_BACKEND_SERVICE_KEY": key])
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.contains("backend.service-key"), "\(run)")
        #expect(!run.stdout.contains(key) && !run.stderr.contains(key))
    }
}
