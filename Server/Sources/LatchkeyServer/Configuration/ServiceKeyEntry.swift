import Configuration
import Foundation

/// One key of `backend.service-keys` (`[{"name", "key"}]`, file only): an app backend's Bearer key, named so the
/// audit log says which backend acted and keys can be rotated one at a time.
public struct ServiceKeyEntry: Sendable, Equatable, CustomStringConvertible {
    /// The key's name, in the audit log.
    public var name: String
    /// The secret itself: never logged nor shown.
    public var key: String

    /// The shortest key accepted.
    static let minimumLength = 32

    public init(name: String, key: String) {
        self.name = name
        self.key = key
    }

    /// The name only: the key is a secret.
    public var description: String { "ServiceKeyEntry(\(self.name))" }

    /// The entries of `backend.service-keys` and what is wrong with them (a name empty or used twice, a key shorter
    /// than 32 characters), never quoting a key.
    static func entries(reader: ConfigReader) -> (entries: [ServiceKeyEntry], problems: [String]) {
        let list = ObjectListSetting(reader: reader.scoped(to: "backend"), key: "service-keys", name: "backend.service-keys")
        var entries: [ServiceKeyEntry] = []
        var problems = list.problems
        for (index, object) in list.objects.enumerated() {
            problems += list.unknownFields(index, allowed: ["name", "key"])
            let name = object["name"] as? String ?? ""
            let key = object["key"] as? String ?? ""
            if name.isEmpty { problems.append(list.problem(index, "\"name\" must be non-empty text")) }
            if entries.contains(where: { $0.name == name }) { problems.append(list.problem(index, "the name \"\(name)\" is used twice")) }
            if key.count < Self.minimumLength {
                problems.append(list.problem(index, "\"key\" must be text of at least \(Self.minimumLength) characters"))
            }
            entries.append(ServiceKeyEntry(name: name, key: key))
        }
        return (problems.isEmpty ? entries : [], problems)
    }
}
