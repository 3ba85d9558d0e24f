import Configuration
import Foundation

/// The backend API's single key: `backend.service-key` (`LATCHKEY_BACKEND_SERVICE_KEY`, secret), audited as `backend`.
/// Named keys, several for rotation, are `backend.service-keys` (a config file only: ``ServiceKeyEntry``), each
/// audited as `backend:<name>`. Without any key the backend routes answer 404.
public struct BackendConfiguration: Sendable {
    public var serviceKey: String?

    public init() {}

    init(reader: ConfigReader) {
        self.serviceKey = reader.string(forKey: "service-key", isSecret: true)
    }

    /// What is wrong with the settings, if anything (never a key).
    var problems: [String] {
        var problems: [String] = []
        if self.serviceKey?.isEmpty == true { problems.append("backend.service-key must not be empty") }
        return problems
    }
}
