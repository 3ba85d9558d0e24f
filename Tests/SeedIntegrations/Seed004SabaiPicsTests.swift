import Foundation
import LatchkeyClient
import Testing

/// Seed 004 (SabaiPics) through ``SabaiPicsAuth`` and the clerk-ios 1.x stand-in: Clerk's token is every bearer, and a
/// sign-out in Clerk signs the session out.
@Suite struct Seed004SabaiPicsTests {
    // The one test that touches `Clerk.shared`.
    @Test(.timeLimit(.minutes(1))) @MainActor func clerksTokenReachesTheAPIAndASignOutInClerkShowsItsAuthView() async throws {
        let install = StubbedInstall { request in
            switch (request.url.host ?? "", request.url.path, request.bearer) {
            case ("auth.sabaipics.example", "/api/v1/auth/me", "clerk-jwt-1"?): return .profile("sp-user-1", kind: .federated, tokenKind: .external)
            case ("api.sabaipics.example", "/auth/me", "clerk-jwt-1"?): return .json(200, ["userId": "sp-user-1"])
            default: return .error(401, .invalidToken)
            }
        }
        Clerk.shared.session = Clerk.Session(token: "clerk-jwt-1")
        let app = SabaiPicsAuth(session: install.session(SabaiPicsAuth.configuration))

        #expect(await app.launch() == .content(userID: "sp-user-1"))
        #expect(try await app.me() == "sp-user-1")

        let following = Task { await app.followClerk() }
        defer { following.cancel() }
        var states = await app.session.authStates().makeAsyncIterator()
        Clerk.shared.session = nil
        Clerk.shared.authEventEmitter.send(.signedOut)
        while let state = await states.next(), state.isSignedIn {}
        #expect(await app.session.state == .signedOut(reason: .signedOutElsewhere))
        #expect(await app.launch() == .clerkAuthView)
    }
}
