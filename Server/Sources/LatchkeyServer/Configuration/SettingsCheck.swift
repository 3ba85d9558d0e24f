import Configuration
import Foundation
import Logging

/// The start-up check of every setting: a value of the wrong type, out of range, a key in the file or a `LATCHKEY_*`
/// variable that is no setting. Each problem names the key, where it came from and what is allowed.
enum SettingsCheck {
    /// Environment variables that start with `LATCHKEY_` but are no setting, and are not checked: the file's own
    /// variable, and the test suite's (`LATCHKEY_TEST_*`, read by the tests and the scripts, never by the server).
    static let environmentExempt: Set<String> = ["LATCHKEY_CONFIG"]
    static let environmentExemptPrefix = "LATCHKEY_TEST_"

    /// Every problem of `readings` (what the configuration read), `fileValues` (the JSON file's keys, flattened, and their
    /// JSON values) and `environment` (this process's variables).
    static func problems(
        readings: [String: SettingReading], file: (path: String, values: [String: Any])?, environment: [String: String]
    ) -> [String] {
        var problems: [String] = []
        for reading in readings.values.sorted(by: { $0.key < $1.key }) {
            // `key = value (source): what is allowed`, the value left out when it is a secret.
            if reading.isUnreadable {
                let shown = reading.isSecret ? "" : Self.raw(of: reading, file: file, environment: environment).map { " = \($0)" } ?? ""
                problems.append("\(reading.key)\(shown) (\(reading.source)): must be \(Self.phrase(of: reading.type))")
            } else if ObjectListSetting.keys.contains(reading.key), reading.source != .defaultValue, !reading.source.isFile {
                problems.append("\(reading.key) (\(reading.source)): only a configuration file can set it (a JSON array of objects)")
            } else if reading.source != .defaultValue, let value = reading.value, let rule = Self.rangeProblem(key: reading.key, value: value) {
                let shown = reading.isSecret ? "" : " = \(Self.text(of: value))"
                problems.append("\(reading.key)\(shown) (\(reading.source)): \(rule)")
            }
        }
        let known = Set(readings.keys)
        if let file {
            for key in file.values.keys.sorted() where !known.contains(key) {
                problems.append("\(key) (file \(file.path)): not a setting\(Self.suggestion(for: key, among: known))")
            }
        }
        let knownVariables = Dictionary(known.map { (SettingReading.environmentName(of: $0), $0) }, uniquingKeysWith: { first, _ in first })
        for name in environment.keys.sorted() where name.hasPrefix("LATCHKEY_") {
            guard knownVariables[name] == nil, !Self.environmentExempt.contains(name), !name.hasPrefix(Self.environmentExemptPrefix) else { continue }
            let suggestion = Self.closest(to: name, among: Set(knownVariables.keys)).map { "; did you mean \($0)?" } ?? ""
            problems.append("\(name) (environment): not a setting\(suggestion)")
        }
        return problems
    }

    /// What an allowed value of `type` is, for a message.
    static func phrase(of type: ConfigType) -> String {
        switch type {
        case .int: "a whole number"
        case .double: "a number"
        case .bool: "true or false"
        case .string: "text"
        case .stringArray: "a list of text (a JSON array, or comma-separated in the environment)"
        case .intArray, .doubleArray: "a list of numbers"
        case .boolArray: "a list of true or false"
        case .bytes, .byteChunkArray: "base64"
        }
    }

    /// The source's own text of an unreadable value (the file's JSON or the variable's text), for a message.
    private static func raw(of reading: SettingReading, file: (path: String, values: [String: Any])?, environment: [String: String]) -> String? {
        switch reading.source {
        case .environment(let name): return environment[name].map { "\"\($0)\"" }
        case .file:
            guard let value = file?.values[reading.key] else { return nil }
            if let string = value as? String { return "\"\(string)\"" }
            guard JSONSerialization.isValidJSONObject([value]), let data = try? JSONSerialization.data(withJSONObject: [value]) else { return nil }
            return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        case .flag, .defaultValue: return nil
        }
    }

    static func text(of value: ConfigContent) -> String {
        switch value {
        case .string(let string): "\"\(string)\""
        case .int(let int): String(int)
        case .double(let double): double == double.rounded() && abs(double) < 1e15 ? String(Int(double)) : String(double)
        case .bool(let bool): String(bool)
        case .stringArray(let strings): "[" + strings.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        case .intArray(let ints): "[" + ints.map(String.init).joined(separator: ", ") + "]"
        case .doubleArray(let doubles): "[" + doubles.map { Self.text(of: .double($0)) }.joined(separator: ", ") + "]"
        case .boolArray(let bools): "[" + bools.map(String.init).joined(separator: ", ") + "]"
        case .bytes, .byteChunkArray: "<bytes>"
        }
    }

    /// What is wrong with `value` for `key`, when its kind of setting has a range: ports, durations, counts, log levels.
    static func rangeProblem(key: String, value: ConfigContent) -> String? {
        let name = key.split(separator: ".").last.map(String.init) ?? key
        switch value {
        case .int(let int):
            if name == "port" {
                return (0...65_535).contains(int) ? nil : "must be a port from 1 to 65535 (0: any free port)"
            }
            if name.hasPrefix("max-") || name.hasSuffix("-limit") || name.hasSuffix("capacity") || name.hasSuffix("-threads")
                || name.hasSuffix("per-day")
                || name.hasSuffix("-size") || name.hasSuffix("-connections") || name.hasSuffix("-length") || name.hasSuffix("-count")
            {
                return int >= 0 ? nil : "must be 0 or more"
            }
            return nil
        case .double(let seconds):
            guard seconds.isFinite else { return "must be a finite number" }
            if Self.mayBeZero.contains(where: { name.hasSuffix($0) }) { return seconds >= 0 ? nil : "must be 0 or more seconds" }
            if Self.durations.contains(where: { name.hasSuffix($0) }) { return seconds > 0 ? nil : "must be a number of seconds above 0" }
            return nil
        case .string(let text):
            if key == "log-level" {
                let levels = Logger.Level.allCases.map(\.rawValue)
                return levels.contains(text) ? nil : "must be one of \(levels.joined(separator: ", "))"
            }
            return nil
        default:
            return nil
        }
    }

    /// Durations that must be above 0 (a lifetime of 0 would issue dead tokens; an interval of 0 would spin).
    private static let durations = ["lifetime", "interval", "timeout", "window", "period", "retention", "ceiling", "-after", "authentication"]
    /// Durations where 0 means "off" or "none".
    private static let mayBeZero = ["grace", "ttl", "delay", "ahead"]
    /// Durations whose range their own settings check (`apple.leeway`, `storage.duration`).
    private static let checkedElsewhere = ["leeway", "duration", "schedule"]

    /// Whether the setting named `name` (its last key component) is a number of seconds.
    static func isSeconds(_ name: String) -> Bool {
        (Self.durations + Self.mayBeZero + Self.checkedElsewhere).contains { name.hasSuffix($0) }
    }

    private static func suggestion(for key: String, among known: Set<String>) -> String {
        Self.closest(to: key, among: known).map { "; did you mean \($0)?" } ?? ""
    }

    /// The known name closest to `name`, when it is close enough to be a typo (at most a third of its letters differ).
    static func closest(to name: String, among known: Set<String>) -> String? {
        let scored = known.map { ($0, Self.distance(name, $0)) }.min { ($0.1, $0.0) < ($1.1, $1.0) }
        guard let (best, distance) = scored, distance <= max(2, name.count / 3) else { return nil }
        return best
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The JSON file's top-level object. Throws a ``LatchkeyConfigurationError`` naming the file and the line when it
    /// is not a JSON object.
    static func readFile(_ path: String) throws -> [String: Any] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw LatchkeyConfigurationError(description: "\(path): cannot read the configuration file (\(Self.reason(error)))")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw LatchkeyConfigurationError(description: "\(path): not valid JSON \(Self.location(of: error, in: data))")
        }
        guard let root = object as? [String: Any] else {
            throw LatchkeyConfigurationError(description: "\(path): the configuration file must hold one JSON object ({ \"port\": 8080, … })")
        }
        return root
    }

    /// The file's settings, flattened to dotted keys (an object's members under its key; arrays are values).
    static func flatten(_ root: [String: Any]) -> [String: Any] {
        var flat: [String: Any] = [:]
        var pending: [(String, Any)] = root.map { ($0.key, $0.value) }
        while let (key, value) = pending.popLast() {
            if let object = value as? [String: Any] {
                pending.append(contentsOf: object.map { (key + "." + $0.key, $0.value) })
            } else if !(value is NSNull) {
                flat[key] = value
            }
        }
        return flat
    }

    /// "at line L, column C" from Foundation's parser error, else the error's own words.
    private static func location(of error: any Error, in data: Data) -> String {
        let info = (error as NSError).userInfo
        let detail = (info[NSDebugDescriptionErrorKey] as? String) ?? ""
        if let range = detail.range(of: #"line \d+, column \d+"#, options: .regularExpression) {
            return "at \(detail[range]) (\(detail))"
        }
        var index = info["NSJSONSerializationErrorIndex"] as? Int
        if index == nil, let range = detail.range(of: #"character \d+"#, options: .regularExpression) {
            index = Int(detail[range].dropFirst("character ".count))
        }
        if let index, index <= data.count {
            let line = data.prefix(index).reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            return "at line \(line) (\(detail))"
        }
        return detail.isEmpty ? "" : "(\(detail))"
    }

    private static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
            let code = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return String(cString: strerror(code.rawValue))
        }
        return error.localizedDescription
    }
}
