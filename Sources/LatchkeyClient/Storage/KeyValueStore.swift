import Foundation

/// A small, non-secret key-value store like `UserDefaults`; the SDK mirrors the device UUID in it and uses the
/// mirror's absence to notice a reinstall (UserDefaults is wiped by one, the Keychain is not).
public protocol KeyValueStore: Sendable {
    /// The string stored under `key`.
    func string(forKey key: String) -> String?
    /// Stores `value` under `key`, or removes the key when `value` is `nil`.
    func set(_ value: String?, forKey key: String)
}

/// A ``KeyValueStore`` over `UserDefaults`.
///
/// On Linux, Foundation's `UserDefaults` writes `~/.config/<executable name>.plist` only on `synchronize()` (a value set
/// without it is gone when the process exits), so this store synchronizes after each change there.
public struct UserDefaultsStore: KeyValueStore, @unchecked Sendable {
    // UserDefaults is documented as thread-safe.
    private let defaults: UserDefaults

    /// Uses `defaults` (by default `UserDefaults.standard`).
    public init(_ defaults: UserDefaults = .standard) { self.defaults = defaults }

    /// `UserDefaults.string(forKey:)`.
    public func string(forKey key: String) -> String? { self.defaults.string(forKey: key) }
    /// `UserDefaults.set(_:forKey:)`, or `removeObject(forKey:)` for `nil`.
    public func set(_ value: String?, forKey key: String) {
        if let value { self.defaults.set(value, forKey: key) } else { self.defaults.removeObject(forKey: key) }
        #if !canImport(Darwin)
        _ = self.defaults.synchronize()
        #endif
    }
}

/// A ``KeyValueStore`` in memory, for tests and previews.
public final class InMemoryKeyValueStore: KeyValueStore {
    private let values: Locked<[String: String]>

    /// Creates a store holding `values`.
    public init(_ values: [String: String] = [:]) { self.values = Locked(values) }

    /// The value under `key`.
    public func string(forKey key: String) -> String? { self.values.withLock { $0[key] } }
    /// Sets or removes the value under `key`.
    public func set(_ value: String?, forKey key: String) { self.values.withLock { $0[key] = value } }
    /// Forgets everything, as an app reinstall wipes UserDefaults.
    public func removeAll() { self.values.withLock { $0 = [:] } }
}

/// A ``KeyValueStore`` in a JSON file, for command-line apps that keep their state in a directory of their own.
public struct FileKeyValueStore: KeyValueStore {
    /// The file.
    public let fileURL: URL

    /// Keeps values in `fileURL` (created on first write).
    public init(fileURL: URL) { self.fileURL = fileURL }

    /// The value under `key`.
    public func string(forKey key: String) -> String? { self.read()[key] }

    /// Sets or removes the value under `key` and rewrites the file atomically.
    public func set(_ value: String?, forKey key: String) {
        var values = self.read()
        values[key] = value
        guard let data = try? JSONEncoder().encode(values) else { return }
        try? FileManager.default.createDirectory(at: self.fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? data.write(to: self.fileURL, options: .atomic)
    }

    private func read() -> [String: String] {
        guard let data = try? Data(contentsOf: self.fileURL) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    }
}
