import Foundation
import LatchkeyClient
import Testing

/// Each seed's `secureStore()`: the Keychain wherever there is one (under scripts/check-keychain, the stand-in
/// Security module), Mystica's with the access group its widget shares; a file elsewhere. Nothing is read or written.
@Suite struct SeedStoresTests {
    @Test func everySeedKeepsItsSessionInTheKeychainWhereThereIsOne() {
        let stores: [any SecureStore] = [
            StoriAuth.secureStore(), PhotolalaAuth.secureStore(), MysticaAuth.secureStore(), HairstyleAuth.secureStore(),
            SabaiPicsAuth.secureStore(),
        ]
        #if canImport(Security)
        #expect(stores.allSatisfy { $0 is KeychainStore })
        #expect((MysticaAuth.secureStore() as? KeychainStore)?.location.accessGroup == MysticaAuth.accessGroup)
        #else
        #expect(stores.allSatisfy { $0 is FileSecureStore })
        #endif
    }
}
