// Only the SDK is imported here, as in an app: the wire types it answers with come with it.
import Foundation
import LatchkeyClient
import Testing

/// Issue 16, item 10: `UserProfile` and friends are usable with one `import LatchkeyClient`.
@Suite struct ReExportTests {
    @Test func theWireTypesAnAppSeesComeWithTheSDK() {
        let profile: UserProfile? = nil
        let scope: LogoutScope = .global
        let limits = GuestLimitations()
        let code: ErrorCode = .invalidToken
        #expect(profile == nil)
        #expect(scope.rawValue == "global")
        #expect(limits.maxActionsPerDay == nil)
        #expect(code.rawValue == "invalid_token")
    }
}
