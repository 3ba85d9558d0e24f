import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// Passkeys through the SDK's data calls against a live server, with a software authenticator standing in for iCloud
/// Keychain (seed 002's lost phone): a device user adds a passkey, and a new phone signs in with it as the same user.
@Suite struct PasskeyEndToEndTests {
    static let origin = "https://localhost"

    static func passkeysOn(_ configuration: inout LatchkeyConfiguration) {
        configuration.passkeys.rpID = "localhost"
        configuration.passkeys.origins = [Self.origin]
    }

    @Test func aDeviceUserAddsAPasskeyAndANewPhoneSignsInAsTheSameUserWithItsDevice() async throws {
        try await LiveServer.run(configure: Self.passkeysOn) { server in
            let first = AppInstall(server: server).launch()
            _ = await first.bootstrap()
            let device = try await first.registerDevice()
            var authenticator = SoftwareAuthenticator()
            let passkey = try await Self.addPasskey(with: &authenticator, to: first, name: "iPhone")
            #expect(passkey.name == "iPhone")
            #expect(try await first.passkeys().map(\.passkeyID) == [passkey.passkeyID])

            // A new phone: a new install (a new device UUID, nothing stored) that never registered its device.
            let phone = AppInstall(server: server).launch()
            _ = await phone.bootstrap()
            let signedIn = try await Self.signIn(with: &authenticator, on: phone)

            #expect(signedIn.userID == device.userID)
            #expect(signedIn.amr == [.hardwareKey, .user])
            #expect(signedIn.aal == .aal2)
            #expect(await phone.state == .signedIn(signedIn))
            let profile = try await phone.send(.get("/api/v1/users/me", auth: .bearer), decoding: UserProfile.self)
            #expect(profile.userID == device.userID)
            let phoneDevice = try await phone.deviceID().uuidString.lowercased()
            #expect(Set(profile.devices.map(\.deviceID)) == [device.userID, phoneDevice])
            #expect(try await phone.passkeys().first?.lastUsedAt != nil)
        }
    }

    @Test func aPhoneAlreadyPlayingAnonymouslySignsInAndKeepsItsDeviceWithItsOwnUser() async throws {
        try await LiveServer.run(configure: Self.passkeysOn) { server in
            let first = AppInstall(server: server).launch()
            _ = await first.bootstrap()
            let device = try await first.registerDevice()
            var authenticator = SoftwareAuthenticator()
            _ = try await Self.addPasskey(with: &authenticator, to: first, name: "iPhone")

            let phone = AppInstall(server: server).launch()
            _ = await phone.bootstrap()
            let anonymous = try await phone.registerDevice()
            let signedIn = try await Self.signIn(with: &authenticator, on: phone)

            #expect(signedIn.userID == device.userID)
            let profile = try await phone.currentUser()
            #expect(profile.devices.map(\.deviceID) == [device.userID])
            #expect(anonymous.userID == (try await phone.deviceID()).uuidString.lowercased())
        }
    }

    @Test func aRemovedPasskeySignsInNoMore() async throws {
        try await LiveServer.run(configure: Self.passkeysOn) { server in
            let first = AppInstall(server: server).launch()
            _ = await first.bootstrap()
            _ = try await first.registerDevice()
            var authenticator = SoftwareAuthenticator()
            let passkey = try await Self.addPasskey(with: &authenticator, to: first, name: "iPhone")
            let renamed = try await first.renamePasskey(id: passkey.passkeyID, name: "Old phone")
            #expect(renamed.name == "Old phone")

            try await first.removePasskey(id: passkey.passkeyID)

            #expect(try await first.passkeys().isEmpty)
            #expect(await first.state.isSignedIn)
            let phone = AppInstall(server: server).launch()
            _ = await phone.bootstrap()
            await expectRefusal(.unknownCredential) { try await Self.signIn(with: &authenticator, on: phone) }
            #expect(await !phone.state.isSignedIn)
        }
    }

    @Test func aServerWithoutPasskeysRefusesWithPasskeysDisabled() async throws {
        try await LiveServer.run { server in
            let phone = AppInstall(server: server).launch()
            _ = await phone.bootstrap()
            await expectRefusal(.passkeysDisabled) { try await phone.passkeyAuthenticationOptions() }
        }
    }

    /// Adds the authenticator's credential to `session`'s user through the SDK's two registration calls.
    static func addPasskey(with authenticator: inout SoftwareAuthenticator, to session: LatchkeySession, name: String) async throws -> PasskeyResponse
    {
        let started = try await session.passkeyRegistrationOptions()
        let registration = authenticator.register(
            rpID: started.options.rp.id, origin: Self.origin, challenge: try #require(Base64URL.decode(started.options.challenge)),
            userHandle: try #require(Base64URL.decode(started.options.user.id)))
        let credential = try JSONDecoder().decode(RegistrationResponseJSON.self, from: registration.registrationResponseJSON())
        return try await session.finishPasskeyRegistration(
            PasskeyRegistrationRequest(challengeID: started.challengeID, credential: credential, name: name))
    }

    /// Signs `session` in with an assertion of the authenticator's credential through the SDK's two sign-in calls.
    @discardableResult
    static func signIn(with authenticator: inout SoftwareAuthenticator, on session: LatchkeySession) async throws -> AuthSession {
        let started = try await session.passkeyAuthenticationOptions()
        #expect(started.options.allowCredentials.isEmpty)
        let assertion = authenticator.assert(
            rpID: started.options.rpId, origin: Self.origin, challenge: try #require(Base64URL.decode(started.options.challenge)))
        let credential = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: assertion.authenticationResponseJSON())
        return try await session.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: started.challengeID, credential: credential))
    }
}
