import Configuration
import Foundation

extension SettingsReference {
    /// The README's settings reference, generated from what the configuration reads: every setting with its
    /// environment variable, type, default and meaning, in key order (`latchkey config reference` prints it).
    /// A setting the configuration reads without a meaning here is listed as `(undocumented)`, which a test refuses.
    public static func table() async throws -> String {
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: nil, environment: [:])
        var rows: [String: (type: String, value: String)] = [:]
        for reading in configuration.settings.values {
            // The meter every server has (`actions`) stands for the family; its defaults are its own.
            let key = reading.key.replacingOccurrences(of: "meters.actions.", with: "meters.<name>.")
            var value = key == reading.key ? (reading.value.map(SettingsCheck.text(of:)) ?? "—") : "—"
            if let machine = Self.machineDefaults[key] { value = machine }
            rows[key] = (Self.typeName(reading), value)
        }
        for key in Self.meanings.keys where rows[key] == nil { rows[key] = (Self.familyTypes[key] ?? "", "—") }
        var lines = ["| setting | environment | type | default | meaning |", "|---|---|---|---|---|"]
        for key in rows.keys.sorted() {
            let (type, value) = rows[key]!
            let variable = ObjectListSetting.keys.contains(key) ? "(file only)" : "`\(SettingReading.environmentName(of: key))`"
            let shown = value == "—" || value.hasPrefix("(") ? value : "`\(value)`"
            lines.append("| `\(key)` | \(variable) | \(type) | \(shown) | \(Self.meanings[key] ?? "(undocumented)") |")
        }
        return lines.joined(separator: "\n")
    }

    /// Defaults that depend on the machine, said in words (the table is the same on every machine).
    static let machineDefaults = ["passwords.hashing-threads": "(cores − 1, at least 1)"]

    /// The types of settings read only when their family has a member (`providers.<name>.*` with no provider named).
    static let familyTypes = [
        "providers.<name>.issuer": "text", "providers.<name>.jwks-url": "text", "providers.<name>.public-key": "text",
        "providers.<name>.audiences": "list", "providers.<name>.token-type": "text", "providers.<name>.authorized-parties": "list",
        "providers.<name>.subject-claim": "text", "providers.<name>.algorithms": "list", "providers.<name>.leeway": "seconds",
    ]

    /// Settings whose value is a JSON array of objects (file only), with the objects' fields.
    static let objectLists = [
        "webhooks.endpoints": "list of {name, url, secret, events}", "backend.service-keys": "list of {name, key}",
    ]

    private static func typeName(_ reading: SettingReading) -> String {
        let name = reading.key.split(separator: ".").last.map(String.init) ?? reading.key
        switch reading.type {
        case .int: return name == "port" || name.hasSuffix("-port") ? "port" : "integer"
        case .double: return SettingsCheck.isSeconds(name) ? "seconds" : "number"
        case .bool: return "true/false"
        case .string: return "text"
        case .stringArray: return Self.objectLists[reading.key] ?? "list"
        case .doubleArray: return SettingsCheck.isSeconds(name) ? "list of seconds" : "list of numbers"
        default: return "\(reading.type)"
        }
    }
}
