import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The passkey settings of issue 33: without `passkeys.rp-id` every passkey route says so (404 `passkeys_disabled`),
/// the Apple app site association names `passkeys.apple-app-ids`, and settings that cannot work stop the server from
/// starting.
@Suite struct PasskeySettingsTests {
    /// Every passkey route, as a client would call it (with a device's Bearer where the route takes one).
    enum Route: String, CaseIterable, CustomStringConvertible {
        case registerOptions, register, authenticateOptions, authenticate, list, rename, delete, appSiteAssociation
        var description: String { self.rawValue }

        func send(_ client: some TestClientProtocol, bearer: String) async throws -> TestResponse {
            let passkey = UUID().uuidString.lowercased()
            return switch self {
            case .registerOptions: try await client.send(.post, "/api/v1/passkeys/register/options", bearer: bearer, json: "{}")
            case .register:
                try await client.send(
                    .post, "/api/v1/passkeys/register", bearer: bearer, json: #"{"challenge_id": "x", "credential": {}, "name": "n"}"#)
            case .authenticateOptions: try await client.send(.post, "/api/v1/passkeys/authenticate/options", json: "{}")
            case .authenticate: try await client.send(.post, "/api/v1/passkeys/authenticate", json: #"{"challenge_id": "x", "credential": {}}"#)
            case .list: try await client.send(.get, "/api/v1/passkeys", bearer: bearer)
            case .rename: try await client.send(.patch, "/api/v1/passkeys/\(passkey)", bearer: bearer, json: #"{"name": "n"}"#)
            case .delete: try await client.send(.delete, "/api/v1/passkeys/\(passkey)", bearer: bearer)
            case .appSiteAssociation: try await client.send(.get, "/.well-known/apple-app-site-association")
            }
        }
    }

    @Test(arguments: Route.allCases)
    func withoutAnRPIDEveryPasskeyRouteAnswers404PasskeysDisabled(route: Route) async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let answer = try await route.send(client, bearer: device.accessToken)
            #expect(answer.status == .notFound, "\(answer.text)")
            let envelope = try #require(answer.envelope, "\(answer.text)")
            #expect(envelope.error.code == .passkeysDisabled)
            #expect(envelope.error.message == "Passkeys are off: set passkeys.rp-id.")
        }
    }

    /// Turned on, the same calls reach the passkey routes: none is the 404 of passkeys being off.
    @Test(arguments: Route.allCases)
    func withAnRPIDNoPasskeyRouteSaysPasskeysAreOff(route: Route) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let answer = try await route.send(client, bearer: device.accessToken)
            #expect(answer.envelope?.error.code != .passkeysDisabled, "\(answer.status) \(answer.text)")
            #expect(answer.status.code < 500, "\(answer.status) \(answer.text)")
        }
    }

    // MARK: The Apple app site association

    @Test(arguments: Transport.allCases)
    func theAppSiteAssociationNamesTheAppsAsJSON(transport: Transport) async throws {
        let server = try await TestServer.withPasskeys { $0.passkeys.appleAppIDs = ["ABCDE12345.com.example.app", "ABCDE12345.com.example.other"] }
        try await server.test(transport) { client in
            let answer = try await client.send(.get, "/.well-known/apple-app-site-association")
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true, "\(answer.headers)")
            let body = try #require(answer.jsonObject, "\(answer.text)")
            #expect(Set(body.keys) == ["webcredentials"], "\(answer.text)")
            let section = try #require(body["webcredentials"] as? [String: Any], "\(answer.text)")
            #expect(Set(section.keys) == ["apps"], "\(answer.text)")
            #expect(section["apps"] as? [String] == ["ABCDE12345.com.example.app", "ABCDE12345.com.example.other"], "\(answer.text)")
        }
    }

    @Test func passkeysOnWithoutAppIDsServeAnEmptyWebCredentialsSection() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let answer = try await client.send(.get, "/.well-known/apple-app-site-association")
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect((answer.jsonObject?["webcredentials"] as? [String: Any])?["apps"] as? [String] == [], "\(answer.text)")
        }
    }

    /// The file-and-environment form of the setting: a JSON array as `apple.client-ids` takes it.
    @Test func theAppIDsAreReadFromTheEnvironment() async throws {
        let configuration = try await LatchkeyConfiguration.load(
            overrides: [:], configFile: nil,
            environment: ["LATCHKEY_PASSKEYS_RP_ID": "example.com", "LATCHKEY_PASSKEYS_APPLE_APP_IDS": "ABCDE12345.com.example.app"])
        #expect(configuration.passkeys.appleAppIDs == ["ABCDE12345.com.example.app"])
    }

    // MARK: Settings checked at startup

    @Test(arguments: ["sometimes", "REQUIRED", "discouraged"])
    func aUserVerificationOtherThanRequiredOrPreferredIsRefused(value: String) async throws {
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check"], environment: ["LATCHKEY_PASSKEYS_RP_ID": "example.com", "LATCHKEY_PASSKEYS_USER_VERIFICATION": value])
        #expect(run.exitCode == 78, "\(run)")
        let problems = ConfigurationCheckTests.problems(of: run)
        #expect(problems.count == 1, "\(run)")
        #expect(problems.first?.hasPrefix("error: passkeys.user-verification") == true, "\(run)")
    }

    @Test(arguments: ["0", "-5", "soon"])
    func aChallengeLifetimeThatIsNotAPositiveNumberOfSecondsIsRefused(value: String) async throws {
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check"], environment: ["LATCHKEY_PASSKEYS_RP_ID": "example.com", "LATCHKEY_PASSKEYS_CHALLENGE_LIFETIME": value])
        #expect(run.exitCode == 78, "\(run)")
        let problems = ConfigurationCheckTests.problems(of: run)
        #expect(problems.count == 1, "\(run)")
        #expect(problems.first?.hasPrefix("error: passkeys.challenge-lifetime") == true, "\(run)")
    }

    @Test func serveRefusesABadUserVerificationBeforeCreatingAnything() async throws {
        let (run, directory) = try await ConfigurationCheckTests.run(
            ["serve", "--database", "db.sqlite"],
            environment: ["LATCHKEY_PASSKEYS_RP_ID": "example.com", "LATCHKEY_PASSKEYS_USER_VERIFICATION": "sometimes"])
        #expect(run.exitCode == 78, "\(run)")
        #expect(run.stderr.contains("error: passkeys.user-verification"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path))
    }

    @Test func theServerItselfRefusesSettingsThatCannotWork() async throws {
        for keys in [["passkeys.user-verification": "sometimes"], ["passkeys.challenge-lifetime": "0"]] {
            await #expect(throws: LatchkeyServices.ConfigurationError.self, "\(keys)") {
                _ = try await TestServer.withPasskeys(keys: keys)
            }
        }
    }

    @Test func rightPasskeySettingsPassTheCheck() async throws {
        let (run, _) = try await ConfigurationCheckTests.run(
            ["config", "check", "--config", "config.json"],
            files: [
                "config.json": #"""
                {"passkeys": {"rp-id": "example.com", "rp-name": "Example", "origins": ["https://example.com", "https://www.example.com"],
                 "apple-app-ids": ["ABCDE12345.com.example.app"], "user-verification": "preferred", "challenge-lifetime": 90,
                 "timeout": 120}}
                """#
            ])
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.isEmpty, "\(run)")
    }
}
