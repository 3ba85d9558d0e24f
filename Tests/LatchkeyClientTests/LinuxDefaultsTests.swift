import Foundation
import LatchkeyClient
import Testing

/// Issue 16, item 6: on Linux, Foundation's `UserDefaults` keeps a value across processes only after an explicit
/// `synchronize()` (measured with Swift 6.3.1: a `set` alone is gone when the process exits), so the device-ID mirror
/// defaults to a file beside a ``FileSecureStore``.
@Suite struct LinuxDefaultsTests {
    #if !canImport(Darwin)
    @Test func withoutDefaultsTheDeviceIDMirrorIsAFileBesideTheFileSecureStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-defaults-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = LatchkeySession(configuration: .init(serverURL: Fixture.serverURL), secureStore: FileSecureStore(directory: directory))
        let deviceID = try await session.deviceID()
        let mirror = FileKeyValueStore(fileURL: directory.appendingPathComponent("defaults.json"))
        #expect(mirror.string(forKey: "latchkey.device-id") == deviceID.uuidString)
    }
    #endif
}
