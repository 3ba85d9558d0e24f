import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 2: an app extension (widget, share extension) shares the app's Keychain item through an access
/// group but has UserDefaults of its own.
@Suite struct AppExtensionTests {
    @Test func anExtensionsFirstLaunchUsesTheAppsSessionInsteadOfTakingItForAReinstall() async throws {
        let fixture = Fixture { Samples.me(accepting: ["access-1"], $0) }
        let deviceID = try fixture.storeSession()  // the app's session, in the shared store
        let widget = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, isAppExtension: true), secureStore: fixture.store,
            defaults: InMemoryKeyValueStore(), transport: fixture.transport, clock: fixture.clock)
        #expect(await widget.bootstrap().isSignedIn)
        #expect(try await widget.deviceID() == deviceID)
        #expect(try fixture.store.load()?.session?.accessToken == "access-1")
        #expect(await fixture.session().bootstrap().isSignedIn)  // and the app is still signed in
    }

    @Test func outsideAnExtensionMissingDefaultsStillMeanAReinstall() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let app = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, isAppExtension: false), secureStore: fixture.store,
            defaults: InMemoryKeyValueStore(), transport: fixture.transport, clock: fixture.clock)
        #expect(await app.bootstrap() == .signedOut())
    }

    @Test func aCommandLineProcessIsNotAnExtension() {
        #expect(LatchkeySession.Configuration(serverURL: Fixture.serverURL).isAppExtension == false)
    }
}
