import Foundation
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Logging
import Testing

/// The SDK proves the device with its key (DPoP) against a live server: no secret travels, and a refresh token
/// copied off the device is refused.
@Suite struct DeviceKeyEndToEndTests {
    @Test func aRefreshTokenCopiedToAnotherInstallWithoutTheKeyIsRefusedAndTheOwnerKeepsItsSession() async throws {
        try await LiveServer.run { server in
            let owner = AppInstall(server: server)
            let session = owner.launch()
            try await session.registerDevice()
            let stolen = try #require(try owner.store.load())
            #expect(stolen.deviceSecret == nil)
            #expect(stolen.deviceKey != nil)

            // A thief copies the stored session, not the key (a Secure Enclave key cannot be copied at all).
            let thief = AppInstall(server: server)
            try thief.store.save(StoredCredentials(deviceID: stolen.deviceID, session: stolen.session))
            thief.defaults.set(stolen.deviceID.uuidString, forKey: "latchkey.device-id")
            await #expect(throws: LatchkeyError.sessionExpired) { try await thief.launch().refresh() }

            // The owner refreshes with its key, as always.
            #expect(try await session.refresh().userID == stolen.session?.userID)
            #expect(try await session.currentUser().userID == stolen.session?.userID)
        }
    }

    /// Long after the sign-in, the proof of the device key stands in for a recent one: the SDK names the request's access
    /// token in it (`ath`), as the server requires.
    @Test func theDeviceKeysProofLetsAnOldSessionDeleteItsAccount() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            let userID = try await session.registerDevice().userID
            app.advance(by: 3600)  // past tokens.recent-authentication; the next request refreshes first
            #expect(try await session.deleteAccount().userID == userID)
            #expect(try await server.services.users.user(id: userID) == nil)
        }
    }

    @Test func aRelaunchKeepsTheServersNonceSoARefreshIsOneRequest() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            try await app.launch().registerDevice()
            // The first proof had no nonce: the server asked for one, the SDK sent the registration again once.
            #expect(app.transport.count("/api/v1/auth/register-device") == 2)
            _ = try await app.launch().refresh()
            #expect(app.transport.count("/api/v1/auth/refresh") == 1)
        }
    }

    @Test func aDeviceIDClaimedThroughUsersRegisterMakesTheSDKStartANewIdentity() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            let original = try await session.deviceID()
            // Someone claimed this install's UUID first (it travels in X-Device-ID headers).
            _ = try await URLSessionTransport().send(
                TransportRequest(
                    method: "POST", url: server.url.appendingPathComponent("api/v1/users/register"), headers: ["Content-Type": "application/json"],
                    body: try JSONEncoder().encode(RegisterUserRequest(userID: original.uuidString))))
            let events = await session.events()
            let registered = try await session.registerDevice()
            let replaced = try await session.deviceID()
            #expect(replaced != original)
            #expect(registered.userID == replaced.uuidString.lowercased())
            var iterator = events.makeAsyncIterator()
            var seen: [LatchkeyEvent] = []
            while let event = await iterator.next() {
                seen.append(event)
                if case .stateChanged(.signedIn) = event { break }
            }
            #expect(seen.contains(.deviceIdentityReplaced(.idUnavailable)))
        }
    }

    @Test func anOlderInstallWithADeviceSecretMovesToAKey() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            try await app.launch { $0.usesDeviceKey = false }.registerDevice()
            let legacy = try #require(try app.store.load())
            #expect(legacy.deviceSecret != nil)
            #expect(legacy.deviceKey == nil)
            // The updated app signs in again: the secret once more, with a proof, and the key from then on.
            let updated = app.launch()
            try await updated.signOut()
            #expect(try await updated.registerDevice().userID == legacy.deviceID.uuidString.lowercased())
            #expect(try app.store.load()?.deviceKey != nil)
            #expect(
                try await SQLLatchkeyStore(database: server.services.database).device(id: legacy.deviceID.uuidString.lowercased())?.keyThumbprint
                    != nil)
        }
    }

    /// A server (or a proxy in front of it) that redirects gets no Authorization header or refresh token elsewhere.
    @Test func theSDKNeverFollowsARedirect() async throws {
        let elsewhere = SeenHeaders()
        let collector = Router()
        for method in [HTTPRequest.Method.get, .post] {
            collector.on("collect", method: method) { request, _ -> String in
                elsewhere.record(authorization: request.headers[.authorization] ?? "none", deviceID: nil)
                return "ok"
            }
        }
        try await Application(router: collector, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { other in
            let redirector = Router()
            for path in ["api/v1/auth/refresh", "api/v1/auth/me"] {
                redirector.on(RouterPath(path), method: path.hasSuffix("me") ? .get : .post) { _, _ in
                    Response(status: .temporaryRedirect, headers: [.location: "http://127.0.0.1:\(other.port!)/collect"])
                }
            }
            try await Application(router: redirector, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
                let deviceID = UUID()
                let defaults = InMemoryKeyValueStore()
                defaults.set(deviceID.uuidString, forKey: "latchkey.device-id")
                let store = InMemorySecureStore(
                    StoredCredentials(
                        deviceID: deviceID, deviceKey: DeviceKey.generate(),
                        session: StoredSession(
                            kind: .session, userID: "u", accessToken: "access-secret", accessTokenExpiresAt: Date().addingTimeInterval(900),
                            refreshToken: "refresh-secret")))
                let session = LatchkeySession(
                    configuration: .init(serverURL: URL(string: "http://127.0.0.1:\(client.port!)")!), secureStore: store, defaults: defaults)
                await #expect(throws: LatchkeyError.self) { try await session.currentUser() }
                await #expect(throws: LatchkeyError.self) { try await session.refresh() }
            }
        }
        #expect(elsewhere.last == nil, "a redirect was followed")
    }
}
