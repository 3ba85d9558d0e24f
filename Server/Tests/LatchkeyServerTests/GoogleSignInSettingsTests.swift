import Foundation
import LatchkeyServer
import Testing

/// The `google.*` settings: their defaults, the environment variables, JSON arrays, and what stops a start.
@Suite struct GoogleSignInSettingsTests {
    static func load(file json: String? = nil, environment: [String: String] = [:]) async throws -> LatchkeyConfiguration {
        var path: String?
        if let json {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("google-\(UUID().uuidString).json")
            try Data(json.utf8).write(to: file)
            path = file.path
        }
        defer { path.map { try? FileManager.default.removeItem(atPath: $0) } }
        return try await LatchkeyConfiguration.load(overrides: [:], configFile: path, environment: environment)
    }

    @Test func theDefaultsLeaveGoogleOffWithGooglesKeysAndAMinuteOfLeeway() async throws {
        let configuration = try await Self.load()
        #expect(!configuration.google.isEnabled)
        #expect(configuration.google.clientIDs.isEmpty && configuration.google.hostedDomains.isEmpty)
        #expect(configuration.google.jwksURL == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(configuration.google.leeway == 60)
    }

    @Test func theSettingsAreReadFromAFileAsJSONArraysAndFromTheEnvironment() async throws {
        let file = try await Self.load(
            file: """
                {"google": {"client-ids": ["ios.apps.googleusercontent.com", "web.apps.googleusercontent.com"],
                            "hosted-domains": ["example.com"], "leeway": 30}}
                """)
        #expect(file.google.clientIDs == ["ios.apps.googleusercontent.com", "web.apps.googleusercontent.com"])
        #expect(file.google.hostedDomains == ["example.com"])
        #expect(file.google.leeway == 30)
        let environment = try await Self.load(environment: [
            "LATCHKEY_GOOGLE_CLIENT_IDS": "a.apps.googleusercontent.com,b.apps.googleusercontent.com",
            "LATCHKEY_GOOGLE_JWKS_URL": "http://127.0.0.1:9/certs", "LATCHKEY_GOOGLE_HOSTED_DOMAINS": "example.com",
        ])
        #expect(environment.google.clientIDs == ["a.apps.googleusercontent.com", "b.apps.googleusercontent.com"])
        #expect(environment.google.jwksURL == "http://127.0.0.1:9/certs")
        #expect(environment.google.hostedDomains == ["example.com"])
        try LatchkeyServices.validate(environment)  // http to a loopback address is allowed
    }

    @Test(arguments: [
        #"{"google": {"client-ids": 5}}"#, #"{"google": {"hosted-domains": {"a": 1}}}"#, #"{"google": {"leeway": "soon"}}"#,
        #"{"google": {"jwks-url": ["https://a.example"]}}"#, #"{"google": {"client-ids": ["a"],}"#,
    ])
    func aSettingOfTheWrongKindOrAFileThatIsNotJSONStopsTheStart(json: String) async throws {
        await #expect(throws: LatchkeyConfigurationError.self) { _ = try await Self.load(file: json) }
    }

    @Test(arguments: ["http://keys.example.com/certs", "ftp://127.0.0.1/certs", "not a url"])
    func keysFromAnythingButHTTPSOrLoopbackHTTPStopTheStart(url: String) async throws {
        var configuration = try await Self.load(environment: ["LATCHKEY_GOOGLE_CLIENT_IDS": "a.apps.googleusercontent.com"])
        configuration.google.jwksURL = url
        #expect(throws: LatchkeyConfigurationError.self) { try LatchkeyServices.validate(configuration) }
        configuration.google.jwksURL = "https://keys.example.com/certs"
        try LatchkeyServices.validate(configuration)
    }

    @Test func aNegativeLeewayStopsTheStart() async throws {
        var configuration = try await Self.load(environment: ["LATCHKEY_GOOGLE_CLIENT_IDS": "a.apps.googleusercontent.com"])
        configuration.google.leeway = -1
        #expect(throws: LatchkeyConfigurationError.self) { try LatchkeyServices.validate(configuration) }
    }

    @Test func googleIsAReservedProviderName() async throws {
        let configuration = try await Self.load(environment: [
            "LATCHKEY_PROVIDERS_NAMES": "google", "LATCHKEY_PROVIDERS_GOOGLE_ISSUER": "https://accounts.google.com",
            "LATCHKEY_PROVIDERS_GOOGLE_JWKS_URL": "https://www.googleapis.com/oauth2/v3/certs", "LATCHKEY_PROVIDERS_GOOGLE_AUDIENCES": "a",
        ]).invalidProviders
        #expect(configuration.contains { $0.contains("reserved") })
    }
}
