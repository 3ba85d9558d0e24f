import Configuration
import Foundation

/// The configuration file as swift-configuration's JSON snapshot reads it, except that every array of objects
/// (`webhooks.endpoints`, `backend.service-keys`) is given as an array of each member's JSON text: that snapshot takes
/// arrays of strings, numbers and booleans only. ``ObjectListSetting`` reads the texts back.
struct JSONFileProvider: ConfigProvider {
    private let file: JSONSnapshot

    /// `root`: the file's top-level object as `JSONSerialization` read it.
    init(root: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: Self.listsAsText(root))
        self.file = try JSONSnapshot(data: data.bytes, providerName: "FileProvider<JSONSnapshot>", parsingOptions: .default)
    }

    var providerName: String { self.file.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try self.file.value(forKey: key, type: type)
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try self.value(forKey: key, type: type)
    }

    func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await self.watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { self.file }

    func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await self.watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }

    /// `value` with each array that holds an object or an array turned into the array of its members' JSON texts.
    private static func listsAsText(_ value: Any) -> Any {
        if let object = value as? [String: Any] { return object.mapValues(Self.listsAsText) }
        guard let array = value as? [Any], array.contains(where: { $0 is [String: Any] || $0 is [Any] }) else { return value }
        return array.map { member in
            let data = try? JSONSerialization.data(withJSONObject: member, options: [.fragmentsAllowed, .sortedKeys])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
    }
}
