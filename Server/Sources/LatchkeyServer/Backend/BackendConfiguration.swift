import Configuration
import Foundation

/// The backend API's keys. `backend.service-key` (`LATCHKEY_BACKEND_SERVICE_KEY`, secret): one key, audited as
/// `backend`; `backend.service-keys` (a config file only): a JSON array of `{"name", "key"}`, each audited as
/// `backend:<name>`, several for rotation. Without any key the backend routes answer 404.
public struct BackendConfiguration: Sendable {
    /// A named key of `backend.service-keys`.
    public struct ServiceKey: Sendable, Equatable {
        public var name: String
        public var key: String

        public init(name: String, key: String) {
            self.name = name
            self.key = key
        }
    }

    public var serviceKey: String?
    public var serviceKeys: [ServiceKey] = []

    public init() {}

    init(reader: ConfigReader) {
        self.serviceKey = reader.string(forKey: "service-key", isSecret: true)
    }

    /// Every accepted key with the actor it is audited as: `backend` for `backend.service-key`, `backend:<name>` for the
    /// named ones.
    var keys: [(actor: String, key: String)] {
        (self.serviceKey.map { [("backend", $0)] } ?? []) + self.serviceKeys.map { ("backend:" + $0.name, $0.key) }
    }

    /// What is wrong with the settings, if anything (never a key).
    var problems: [String] {
        var problems: [String] = []
        if self.serviceKey?.isEmpty == true { problems.append("backend.service-key must not be empty") }
        if self.serviceKeys.contains(where: { $0.name.isEmpty || $0.key.isEmpty }) {
            problems.append("backend.service-keys: every entry needs a non-empty name and key")
        }
        if Set(self.serviceKeys.map(\.name)).count != self.serviceKeys.count { problems.append("backend.service-keys: names must differ") }
        return problems
    }
}
