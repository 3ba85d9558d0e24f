import Foundation
import LatchkeyClient
import Testing

/// Seed 001 (Photolala) through ``PhotolalaAuth``: Sign in with Apple only, never an anonymous device user.
@Suite struct Seed001PhotolalaTests {
    static let photolalaUser = "550e8400-e29b-41d4-a716-446655440000"

    @Test func aLaunchAfterAReinstallOffersSignInWithAppleAndNeverRegistersTheDevice() async throws {
        let install = StubbedInstall { request in
            switch request.url.path {
            case "/api/v1/auth/apple": return .tokenPair(2, userID: Self.photolalaUser)
            case "/api/v1/storage/credentials":
                return .json(
                    200,
                    StorageCredentials(
                        accessKeyID: "ASIA-test", secretAccessKey: "secret", sessionToken: "sts",
                        expiration: Date(timeIntervalSince1970: 1_800_003_600),
                        expiresIn: 3600, bucket: "photolala", region: "us-east-1", endpoint: "https://s3.us-east-1.amazonaws.com",
                        prefix: "users/\(Self.photolalaUser)/"))
            default: return TransportResponse(status: 404)
            }
        }
        // Before the reinstall: the Keychain item (which survives it) holds the device and a session; UserDefaults (which
        // does not) is empty.
        try install.store.save(
            StoredCredentials(
                deviceID: UUID(), deviceKey: DeviceKey.generate(),
                session: StoredSession(
                    kind: .session, userID: Self.photolalaUser, accessToken: "access-1",
                    accessTokenExpiresAt: install.clock.now().addingTimeInterval(900),
                    refreshToken: "refresh-1")))
        let app = PhotolalaAuth(session: install.session(PhotolalaAuth.configuration))

        #expect(await app.launch() == .signInWithApple)
        #expect(install.transport.requests.isEmpty)  // no register-device, nor anything else

        let attempt = PhotolalaAuth.AppleAttempt()
        let screen = try await app.signIn(attempt, identityToken: Data("apple-identity-token".utf8), authorizationCode: Data("apple-code".utf8))
        #expect(screen == .library(userID: Self.photolalaUser))
        let target = try await app.uploadTarget(md5: "9e107d9d372bb6826bd81d3542a419d6")
        #expect(target.key == "users/\(Self.photolalaUser)/photos/9e107d9d372bb6826bd81d3542a419d6.dat")

        let apple = try #require(install.transport.requests(to: "auth.photolala.example", "/api/v1/auth/apple").first)
        #expect(apple.header("Authorization") == nil)  // not linked to any device user
        #expect(install.transport.requests.allSatisfy { !$0.url.path.contains("register-device") })
    }
}
