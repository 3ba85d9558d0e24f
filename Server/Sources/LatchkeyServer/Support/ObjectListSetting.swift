import Configuration
import Foundation

/// A setting whose value is a JSON array of objects, such as `webhooks.endpoints`: only a configuration file can hold
/// one (no environment variable), and it is read as a secret (its objects hold secrets), so it is never shown.
struct ObjectListSetting {
    /// Every such setting; ``SettingsCheck`` refuses them from anywhere but the file.
    static let keys: Set<String> = ["webhooks.endpoints", "backend.service-keys"]

    /// The dotted key, for messages.
    let key: String
    /// Each member's fields, in the file's order.
    private(set) var objects: [[String: Any]] = []
    /// What is wrong with the members' shape (a member that is no object); never a value.
    private(set) var problems: [String] = []

    /// Reads `key` (relative to `reader`) whose absolute dotted name is `name`.
    init(reader: ConfigReader, key: String, name: String) {
        self.key = name
        for (index, text) in reader.stringArray(forKey: ConfigKey(key), isSecret: true, default: []).enumerated() {
            if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? [String: Any] {
                self.objects.append(object)
            } else {
                self.problems.append("\(name): entry \(index + 1) must be a JSON object")
            }
        }
    }

    /// A problem for member `index` (from 0) of the list: `webhooks.endpoints: entry 2: …`.
    func problem(_ index: Int, _ text: String) -> String {
        "\(self.key): entry \(index + 1): \(text)"
    }

    /// Problems of member `index` whose fields are not exactly `allowed`: a missing one or one no setting has.
    func unknownFields(_ index: Int, allowed: Set<String>) -> [String] {
        self.objects[index].keys.filter { !allowed.contains($0) }.sorted().map {
            self.problem(index, "\"\($0)\" is not a field (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }
}
