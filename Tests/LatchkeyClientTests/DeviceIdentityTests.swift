import Foundation
import LatchkeyClient
import Testing

@Suite struct DeviceIdentityTests {
    @Test func theDeviceIDIsCreatedOnceStoredAndMirroredInDefaults() async throws {
        let fixture = Fixture()
        let first = try await fixture.session().deviceID()
        let second = try await fixture.session().deviceID()
        #expect(first == second)
        #expect(try fixture.store.load()?.deviceID == first)
        #expect(fixture.defaults.string(forKey: "latchkey.device-id") == first.uuidString)
    }

    @Test func aDeviceIDKeptOnlyInDefaultsIsAdopted() async throws {
        let fixture = Fixture()
        let legacy = UUID()
        fixture.defaults.set(legacy.uuidString, forKey: "latchkey.device-id")
        #expect(try await fixture.session().deviceID() == legacy)
    }

    @Test func aReinstallDropsTheSessionButKeepsDeviceIDAndSecret() async throws {
        let fixture = Fixture()
        let deviceID = try fixture.storeSession()
        fixture.defaults.removeAll()  // what a reinstall does; the secure store survives
        let session = fixture.session()
        #expect(try await session.deviceID() == deviceID)
        #expect(await session.bootstrap() == .signedOut())
        let stored = try fixture.store.load()
        #expect(stored?.session == nil)
        #expect(stored?.deviceSecret == "secret-1")
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func keepSessionPolicyKeepsTheSessionAcrossAReinstall() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        fixture.defaults.removeAll()
        _ = try await fixture.session { $0.reinstallPolicy = .keepSession }.deviceID()
        #expect(try fixture.store.load()?.session != nil)
    }
}
