import Configuration
import Foundation

extension LatchkeyConfiguration {
    /// Variables whose values are secrets: never shown by `latchkey config show` or in a message.
    static let secretVariables: Set<String> = [
        "LATCHKEY_MASTER_KEY", "LATCHKEY_APPLE_PRIVATE_KEY", "LATCHKEY_USAGE_SERVICE_KEY", "LATCHKEY_METRICS_TOKEN", "LATCHKEY_DATABASE",
        "LATCHKEY_STORAGE_SECRET_ACCESS_KEY", "LATCHKEY_SMTP_PASSWORD",
        "LATCHKEY_BACKEND_SERVICE_KEY", "LATCHKEY_HOOKS_CLAIMS_SECRET",
    ]

    /// Reads the configuration the way `latchkey` does: `overrides` (command-line options) first, then
    /// `LATCHKEY_*` environment variables, then the JSON file at `configFile` (or `LATCHKEY_CONFIG`), then defaults.
    ///
    /// Every setting is checked as it is read: a value of the wrong type, a value out of range, a key in the file or a
    /// `LATCHKEY_*` variable that is no setting, or a file that is not JSON throws a ``LatchkeyConfigurationError`` that
    /// lists each problem with its key, where it came from and what is allowed. ``settings`` holds what was read, with
    /// each value's source.
    public static func load(
        overrides: [String: ConfigContent], configFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> LatchkeyConfiguration {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in overrides {
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(value, isSecret: false)
        }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: values),
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(Self.secretVariables))
                .prefixKeys(with: ["latchkey"]),
        ]
        var kinds: [SettingProviderKind] = [.flags, .environment]
        var file: (path: String, values: [String: Any])?
        if let path = configFile ?? environment["LATCHKEY_CONFIG"] {
            let root = try SettingsCheck.readFile(path)
            let fileValues = SettingsCheck.flatten(root)
            do {
                providers.append(try JSONFileProvider(root: root))
            } catch {
                throw LatchkeyConfigurationError(description: "\(path): \(error)")
            }
            kinds.append(.file(path))
            file = (path, fileValues)
        }
        let recorder = SettingsRecorder(providers: kinds)
        var configuration = LatchkeyConfiguration(reader: ConfigReader(providers: providers, accessReporter: recorder))
        configuration.settings = recorder.all
        let problems =
            SettingsCheck.problems(readings: configuration.settings, file: file, environment: environment) + configuration.webhooks.problems
            + configuration.backendServiceKeyProblems
        if !problems.isEmpty { throw LatchkeyConfigurationError(problems: problems) }
        return configuration
    }
}
