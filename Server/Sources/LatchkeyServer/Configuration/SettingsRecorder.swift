import Configuration
import Foundation
import Synchronization

/// Where one setting's value came from.
public enum SettingSource: Sendable, Hashable, CustomStringConvertible {
    /// A command-line option, such as `--port`.
    case flag(String)
    /// An environment variable, such as `LATCHKEY_PORT`.
    case environment(String)
    /// The JSON configuration file at this path.
    case file(String)
    /// Nothing set it: the built-in default.
    case defaultValue

    /// Whether it is the configuration file.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .flag(let name): "flag \(name)"
        case .environment(let name): "environment \(name)"
        case .file(let path): "file \(path)"
        case .defaultValue: "default"
        }
    }
}

/// One setting as the configuration read it.
public struct SettingReading: Sendable {
    /// The dotted key, such as `tokens.session-lifetime`.
    public var key: String
    /// The type it is read as.
    public var type: ConfigType
    /// What the configuration uses: the source's value, or the default when nothing set it or the value was unreadable.
    public var value: ConfigContent?
    /// Whether the value is a secret (never shown).
    public var isSecret: Bool
    /// Where the value came from.
    public var source: SettingSource
    /// Whether the source held something that is not of ``type``.
    public var isUnreadable: Bool

    /// The value as `latchkey config show` prints it: a secret as `<set>`, nothing as `<not set>`.
    public var shownValue: String {
        guard let value = self.value else { return "<not set>" }
        return self.isSecret ? "<set>" : SettingsCheck.text(of: value)
    }

    /// The environment variable that sets `key`: `LATCHKEY_` and the key in capitals, `.` and `-` as `_`.
    public static func environmentName(of key: String) -> String {
        "LATCHKEY_" + key.uppercased().map { $0 == "." || $0 == "-" ? "_" : String($0) }.joined()
    }
}

/// The providers of a configuration, in the order they are asked (the first that has a value wins).
enum SettingProviderKind: Sendable {
    case flags
    case environment
    case file(String)
}

/// Records every setting the configuration reads — its type, value and source — as swift-configuration reports each
/// access. What it holds after ``LatchkeyConfiguration/init(reader:)`` is the set of settings this configuration knows.
final class SettingsRecorder: AccessReporter, Sendable {
    private let providers: [SettingProviderKind]
    private let readings = Mutex<[String: SettingReading]>([:])

    init(providers: [SettingProviderKind]) {
        self.providers = providers
    }

    var all: [String: SettingReading] { self.readings.withLock { $0 } }

    func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        var source = SettingSource.defaultValue
        var failed = false
        if let decisive = event.providerResults.last, event.providerResults.count <= self.providers.count {
            let found: Bool
            switch decisive.result {
            case .success(let lookup): found = lookup.value != nil
            case .failure:
                found = true
                failed = true
            }
            if found {
                switch self.providers[event.providerResults.count - 1] {
                case .flags: source = .flag("--" + key)
                case .environment: source = .environment(SettingReading.environmentName(of: key))
                case .file(let path): source = .file(path)
                }
            }
        }
        let value = try? event.result.get()
        let reading = SettingReading(
            key: key, type: event.metadata.valueType, value: value?.content, isSecret: value?.isSecret ?? false, source: source,
            isUnreadable: failed || event.conversionError != nil)
        self.readings.withLock { readings in
            // A key read twice (a scoped reader and the whole configuration) keeps its secrecy from either read.
            let wasSecret = readings[key]?.isSecret ?? false
            readings[key] = reading
            if wasSecret { readings[key]?.isSecret = true }
        }
    }
}
