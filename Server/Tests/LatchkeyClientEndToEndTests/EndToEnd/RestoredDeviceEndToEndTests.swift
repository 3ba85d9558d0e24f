import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 5: a phone restored from a backup gets UserDefaults (the device UUID) back, not the
/// `ThisDeviceOnly` Keychain item (the device key or secret).
@Suite struct RestoredDeviceEndToEndTests {
    @Test func aRestoredPhoneStartsANewDeviceIdentityAndTheOriginalKeepsItsAccount() async throws {
        try await LiveServer.run { server in
            let phone = AppInstall(server: server)
            let original = try await phone.launch().registerDevice()

            let restored = AppInstall(server: server)
            restored.defaults.set(phone.defaults.string(forKey: "latchkey.device-id"), forKey: "latchkey.device-id")
            let session = restored.launch()
            let events = await EventRecorder(session)
            #expect(await session.bootstrap() == .signedOut())
            let registered = try await session.registerDevice()
            #expect(registered.userID != original.userID)
            #expect(try await session.deviceID().uuidString.lowercased() == registered.userID)
            #expect(await events.saw(.deviceIdentityReplaced(.restoredFromBackup)))

            #expect(try await phone.launch().currentUser().userID == original.userID)
        }
    }
}
