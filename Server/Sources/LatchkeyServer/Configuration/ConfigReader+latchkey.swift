import Configuration
import Foundation
import SystemPackage

extension LatchkeyConfiguration {
    /// Reads the configuration the way `latchkey` does: `overrides` (command-line options) first, then
    /// `LATCHKEY_*` environment variables, then the JSON file at `configFile` (or `LATCHKEY_CONFIG`), then defaults.
    public static func load(overrides: [String: ConfigContent], configFile: String?) async throws -> LatchkeyConfiguration {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in overrides {
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(value, isSecret: false)
        }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(values: values),
            EnvironmentVariablesProvider(
                secretsSpecifier: .specific([
                    "LATCHKEY_MASTER_KEY", "LATCHKEY_APPLE_PRIVATE_KEY", "LATCHKEY_USAGE_SERVICE_KEY", "LATCHKEY_METRICS_TOKEN", "LATCHKEY_DATABASE",
                    "LATCHKEY_STORAGE_SECRET_ACCESS_KEY", "LATCHKEY_SMTP_PASSWORD",
                ])
            ).prefixKeys(with: ["latchkey"]),
        ]
        if let path = configFile ?? ProcessInfo.processInfo.environment["LATCHKEY_CONFIG"] {
            providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
        }
        return LatchkeyConfiguration(reader: ConfigReader(providers: providers))
    }
}
