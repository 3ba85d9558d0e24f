import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// Issue 33: a device account that survives a lost phone. A device user adds a passkey; a phone that never ran the app
/// signs in with it as the same user; the user lists, renames and removes passkeys. Over HTTP, with the software
/// authenticator of ``LatchkeyPasskeyPeer`` making real WebAuthn registrations and assertions.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyTests {
    // MARK: The whole ceremony

    /// The story: a device user adds a passkey; a new phone, holding only the synced passkey and a DPoP key, signs
    /// in and is the same user, its device joins the user's devices, the access token says `amr ["hwk", "user"]` at `aal2`,
    /// and the session is bound to the new phone's key.
    @Test(arguments: Transport.allCases)
    func aNewPhoneSignsInWithThePasskeyAsTheSameUserWithABoundAAL2Session(transport: Transport) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(transport) { client in
            var authenticator = SoftwareAuthenticator()
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            let registered = try await client.finishPasskeyRegistration(
                ceremony.challengeID, authenticator.register(ceremony), name: "iPhone", bearer: device.accessToken)
            #expect(registered.status == .created, "\(registered.text)")
            #expect(Set(registered.jsonObject?.keys.map { $0 } ?? []) == ["passkey_id", "name", "created_at", "backed_up"], "\(registered.text)")
            let passkey = try registered.decode(PasskeyResponse.self)
            #expect(UUID(uuidString: passkey.passkeyID) != nil)
            #expect(passkey.name == "iPhone" && passkey.backedUp && passkey.lastUsedAt == nil)
            #expect(passkey.createdAt == server.clock.now().rounded)

            let newPhone = UUID().uuidString.lowercased()
            let key = DPoPKey()
            let path = "/api/v1/passkeys/authenticate"
            let proof = try key.proof("POST", path, nonce: try await client.dpopNonce(), iat: server.clock.now())
            let signedIn = try await client.signInWithPasskey(&authenticator, deviceID: newPhone, headers: [HTTPField.Name("DPoP")!: proof])
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let pair = try signedIn.decode(TokenPairResponse.self)
            #expect(pair.userID == device.userID)
            let signedInClaims = try claims(of: pair.accessToken)
            #expect(signedInClaims.subject == device.userID)
            #expect(signedInClaims.amr == [.hardwareKey, .user], "\(signedInClaims)")
            #expect(signedInClaims.aal == .aal2, "\(signedInClaims)")
            #expect(signedInClaims.deviceID == newPhone, "\(signedInClaims)")

            let profile = try await client.me(pair.accessToken).decode(UserProfile.self)
            #expect(profile.userID == device.userID)
            #expect(Set(profile.devices.map(\.deviceID)) == [device.userID, newPhone], "\(profile.devices)")
            // Bound: the refresh token is worthless without the new phone's key, and refreshes with it.
            expectUnauthorized(try await client.refresh(pair.refreshToken, key: nil, at: server.clock.now()), code: .invalidGrant)
            #expect(try await client.refresh(pair.refreshToken, key: key, at: server.clock.now()).status == .ok)
            // The first phone's session is untouched.
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    /// The user's data comes along: what the first device stored under the user is the new phone's.
    @Test func theNewPhoneSeesTheUsersBudgetAndProfile() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            _ = try await server.services.budgets.setLimit(ofUser: device.userID, to: 42)
            let pair = try await client.signInWithPasskey(&authenticator, deviceID: UUID().uuidString).decode(TokenPairResponse.self)
            let profile = try await client.me(pair.accessToken).decode(UserProfile.self)
            #expect(profile.userID == device.userID && profile.kind == .device)
            #expect(profile.budget?.limit == 42, "\(profile)")
        }
    }

    @Test func aSignInWithoutADeviceIDStartsASessionAndAddsNoDevice() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let signedIn = try await client.signInWithPasskey(&authenticator)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let pair = try signedIn.decode(TokenPairResponse.self)
            #expect(pair.userID == device.userID)
            #expect(try await client.me(pair.accessToken).decode(UserProfile.self).devices.map(\.deviceID) == [device.userID])
        }
    }

    /// A device ID that is another user's does not move to this one: 409 `device_id_claimed`, no session.
    @Test func aDeviceIDOfAnotherUserIs409AndStartsNothing() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let stranger = try await client.registerDevice()
            let refused = try await client.signInWithPasskey(&authenticator, deviceID: stranger.userID)
            #expect(refused.status == .conflict, "\(refused.text)")
            #expect(refused.envelope?.error.code == .deviceIDClaimed)
            #expect(try await server.sessionCount(of: device.userID) == 1)
            #expect(try await client.passkeyList(bearer: device.accessToken).first?.lastUsedAt == nil)
        }
    }

    @Test func aDeviceIDThatIsNotAUUIDIs400() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            _ = try await client.deviceUserWithPasskey(&authenticator)
            let refused = try await client.signInWithPasskey(&authenticator, deviceID: "not-a-uuid")
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.envelope?.error.code == .invalidUUID)
        }
    }

    /// The new phone joined without a DPoP key: it is given a device secret, once, to sign in again with later.
    @Test func aNewPhoneWithoutAKeyIsGivenItsDeviceSecret() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            let newPhone = UUID().uuidString.lowercased()
            let pair = try await client.signInWithPasskey(&authenticator, deviceID: newPhone).decode(TokenPairResponse.self)
            let secret = try #require(pair.deviceSecret)
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: newPhone, deviceSecret: secret))
            #expect(again.status == .ok, "\(again.text)")
            #expect(try again.decode(TokenPairResponse.self).userID == device.userID)
        }
    }

    @Test func theSignInIsAudited() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            #expect(try await client.signInWithPasskey(&authenticator).status == .ok)
            let added = try await server.services.audit.events(AuditQuery(action: "passkey.add"))
            #expect(added.count == 1 && added.first?.target == "user \(device.userID)", "\(added)")
            let signIns = try await server.services.audit.events(AuditQuery(action: "passkey.sign_in"))
            #expect(signIns.count == 1, "\(signIns)")
            #expect(signIns.first?.target == "user \(device.userID)")
            #expect(signIns.first?.details?.contains(passkey.passkeyID) == true, "\(signIns)")
        }
    }

    // MARK: Options

    @Test func registrationOptionsAreACreationOptionsJSONForTheUser() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let answer = try await client.passkeyRegistrationOptions(bearer: device.accessToken)
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(Set(answer.jsonObject?.keys.map { $0 } ?? []) == ["challenge_id", "options"], "\(answer.text)")
            let response = try answer.decode(PasskeyRegistrationOptionsResponse.self)
            #expect(!response.challengeID.isEmpty)
            let options = response.options
            #expect(options.rp == .init(id: TestServer.rpID, name: "Latchkey"))
            let uuid = try #require(UUID(uuidString: device.userID))
            #expect(options.user.id == LatchkeyAPI.Base64URL.encode(withUnsafeBytes(of: uuid.uuid) { Array($0) }))
            #expect(options.user.name == device.userID && options.user.displayName == device.userID)
            #expect(LatchkeyAPI.Base64URL.decode(options.challenge)?.count == 32)
            #expect(options.pubKeyCredParams.map(\.alg) == [-7, -8, -257])
            #expect(options.pubKeyCredParams.allSatisfy { $0.type == "public-key" })
            #expect(options.authenticatorSelection.residentKey == "required")
            #expect(options.authenticatorSelection.userVerification == "required")
            #expect(options.attestation == "none")
            #expect(options.timeout == 300_000)
            #expect(options.excludeCredentials.isEmpty)
        }
    }

    /// A user with an address is named by it; the settings name the relying party, the policy and the timeout.
    @Test func theOptionsFollowTheSettings() async throws {
        let server = try await TestServer.withPasskeys(
            keys: ["passkeys.rp-name": "Acme", "passkeys.user-verification": "preferred", "passkeys.timeout": "120.0"])
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let registration = try await client.passkeyRegistrationOptions(bearer: device.accessToken)
                .decode(PasskeyRegistrationOptionsResponse.self).options
            #expect(registration.rp.name == "Acme")
            #expect(registration.authenticatorSelection.userVerification == "preferred")
            #expect(registration.timeout == 120_000)
            let signIn = try await client.passkeyAuthenticationOptions().decode(PasskeyAuthenticationOptionsResponse.self).options
            #expect(signIn.userVerification == "preferred" && signIn.timeout == 120_000)
        }
    }

    @Test func theRelyingPartyNameIsTheAppNameByDefault() async throws {
        let server = try await TestServer.withPasskeys(keys: ["email.app-name": "Acme Notes"])
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let options = try await client.passkeyRegistrationOptions(bearer: device.accessToken).decode(PasskeyRegistrationOptionsResponse.self)
            #expect(options.options.rp.name == "Acme Notes")
        }
    }

    @Test func excludeCredentialsNamesTheUsersPasskeysOnly() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var mine = SoftwareAuthenticator()
            var theirs = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&mine)
            _ = try await client.deviceUserWithPasskey(&theirs)
            let options = try await client.passkeyRegistrationOptions(bearer: device.accessToken)
                .decode(PasskeyRegistrationOptionsResponse.self).options
            #expect(options.excludeCredentials.map(\.id) == [LatchkeyAPI.Base64URL.encode(mine.credentialID)])
            #expect(options.excludeCredentials.allSatisfy { $0.type == "public-key" })
        }
    }

    @Test func signInOptionsAskForAnyDiscoverablePasskeyOfTheRelyingParty() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let answer = try await client.passkeyAuthenticationOptions()
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(Set(answer.jsonObject?.keys.map { $0 } ?? []) == ["challenge_id", "options"], "\(answer.text)")
            let response = try answer.decode(PasskeyAuthenticationOptionsResponse.self)
            #expect(response.options.rpId == TestServer.rpID)
            #expect(response.options.allowCredentials.isEmpty)
            #expect(response.options.userVerification == "required")
            #expect(response.options.timeout == 300_000)
            #expect(LatchkeyAPI.Base64URL.decode(response.options.challenge)?.count == 32)
            let other = try await client.passkeyAuthenticationOptions().decode(PasskeyAuthenticationOptionsResponse.self)
            #expect(other.challengeID != response.challengeID && other.options.challenge != response.options.challenge)
        }
    }

    @Test func aGuestCannotAskForRegistrationOptions() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [.init("X-Device-ID")!: UUID().uuidString])
            let token = try guest.decode(GuestSessionResponse.self).accessToken
            let refused = try await client.passkeyRegistrationOptions(bearer: token)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.envelope?.error.code == .forbidden)
            expectUnauthorized(try await client.passkeyRegistrationOptions(bearer: "not-a-token"))
        }
    }

    // MARK: Listing, renaming, removing

    @Test func theListShowsEachPasskeyWithItsLastUse() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var first = SoftwareAuthenticator()
            var second = SoftwareAuthenticator(backupEligible: false, backedUp: false)
            let (device, phone) = try await client.deviceUserWithPasskey(&first)
            server.clock.advance(by: 60)
            let key = try await client.addPasskey(&second, bearer: device.accessToken, name: "  YubiKey  ")
            #expect(key.name == "YubiKey" && !key.backedUp)

            let listed = try await client.passkeys(bearer: device.accessToken)
            #expect(listed.status == .ok, "\(listed.text)")
            let items = try #require(listed.jsonObject?["passkeys"] as? [[String: Any]], "\(listed.text)")
            #expect(items.count == 2)
            for item in items {
                #expect(Set(item.keys).isSubset(of: ["passkey_id", "name", "created_at", "last_used_at", "backed_up"]), "\(item.keys)")
                #expect(Set(item.keys).isSuperset(of: ["passkey_id", "name", "created_at", "backed_up"]), "\(item.keys)")
            }
            #expect(try listed.decode(PasskeyListResponse.self).passkeys == [phone, key])

            server.clock.advance(by: 60)
            #expect(try await client.signInWithPasskey(&first).status == .ok)
            let after = try await client.passkeyList(bearer: device.accessToken)
            #expect(after.first?.lastUsedAt == server.clock.now().rounded)
            #expect(after.last?.lastUsedAt == nil)
        }
    }

    @Test func aPasskeyIsNamedPasskeyUnlessNamed() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (_, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            #expect(passkey.name == "Passkey")
        }
    }

    @Test(arguments: ["", "   ", String(repeating: "x", count: 65), "tab\there"])
    func aNameThatIsBlankTooLongOrHasControlCharactersIs400(name: String) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
            let refused = try await client.finishPasskeyRegistration(
                ceremony.challengeID, authenticator.register(ceremony), name: name, bearer: device.accessToken)
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.envelope?.error.code == .invalidRequest)
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)

            var other = SoftwareAuthenticator()
            let passkey = try await client.addPasskey(&other, bearer: device.accessToken, name: String(repeating: "y", count: 64))
            let rename = try await client.renamePasskey(passkey.passkeyID, to: name, bearer: device.accessToken)
            #expect(rename.status == .badRequest, "\(rename.text)")
            #expect(rename.envelope?.error.code == .invalidRequest)
        }
    }

    @Test func renamingAnswersThePasskeyWithItsNewName() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let renamed = try await client.renamePasskey(passkey.passkeyID, to: "Work laptop", bearer: device.accessToken)
            #expect(renamed.status == .ok, "\(renamed.text)")
            var expected = passkey
            expected.name = "Work laptop"
            #expect(try renamed.decode(PasskeyResponse.self) == expected)
            #expect(try await client.passkeyList(bearer: device.accessToken) == [expected])
        }
    }

    /// Another user's passkey, or one that does not exist, is not there for this user: 404, and nothing changes.
    @Test func renamingOrRemovingAnotherUsersPasskeyIs404() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var theirs = SoftwareAuthenticator()
            let (owner, passkey) = try await client.deviceUserWithPasskey(&theirs)
            let stranger = try await client.registerDevice()
            for id in [passkey.passkeyID, UUID().uuidString.lowercased()] {
                let rename = try await client.renamePasskey(id, to: "mine now", bearer: stranger.accessToken)
                #expect(rename.status == .notFound, "\(rename.text)")
                #expect(rename.envelope?.error.code == .notFound)
                let remove = try await client.removePasskey(id, bearer: stranger.accessToken)
                #expect(remove.status == .notFound, "\(remove.text)")
                #expect(remove.envelope?.error.code == .notFound)
            }
            #expect(try await client.passkeyList(bearer: stranger.accessToken).isEmpty)
            #expect(try await client.passkeyList(bearer: owner.accessToken) == [passkey])
        }
    }

    @Test func removingAnswers204AndThePasskeySignsInNoMore() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let removed = try await client.removePasskey(passkey.passkeyID, bearer: device.accessToken)
            #expect(removed.status == .noContent, "\(removed.text)")
            #expect(removed.body.readableBytes == 0)
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
            let refused = try await client.signInWithPasskey(&authenticator)
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(refused.envelope?.error.code == .unknownCredential)
            let audit = try await server.services.audit.events(AuditQuery(action: "passkey.remove"))
            #expect(audit.map(\.actor) == ["user:\(device.userID)"], "\(audit)")
            #expect(audit.first?.details?.contains(passkey.passkeyID) == true)
        }
    }
}

extension Date {
    /// This instant as the API writes it: whole seconds.
    var rounded: Date { Date(timeIntervalSince1970: self.timeIntervalSince1970.rounded(.down)) }
}
