import Foundation
import Testing

/// Issue 30, item 10: the privacy manifest App Store uploads require of an SDK (ITMS-91061).
@Suite struct PrivacyManifestTests {
    static let manifestURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/LatchkeyClient/PrivacyInfo.xcprivacy")

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: Self.manifestURL)
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test func declaresUserDefaultsForTheAppItselfAndNoTracking() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        // The device UUID is mirrored in UserDefaults (DeviceIdentity); the SDK reads no file timestamps, disk space,
        // boot time or keyboards.
        #expect(types.compactMap { $0["NSPrivacyAccessedAPIType"] as? String } == ["NSPrivacyAccessedAPICategoryUserDefaults"])
        #expect(types.first?["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["CA92.1"])
    }

    @Test func isAResourceOfTheLatchkeyClientTarget() throws {
        let manifestSource = try String(
            contentsOf: Self.manifestURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifestSource.contains(#".copy("PrivacyInfo.xcprivacy")"#))
    }
}
