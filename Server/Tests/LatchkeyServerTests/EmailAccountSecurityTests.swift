import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The attacks on email accounts of issue 27, each over a live socket and mailing through the SMTP peer: a stolen token
/// never becomes a password login (finding 1), an address belongs to whoever verifies it and a reset gives the account
/// back whole (finding 2), and registration does not tell which addresses have accounts (finding 8).
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct EmailAccountSecurityTests {
    static let password = "correct horse battery staple"
    static let attackerPassword = "the attacker's own passphrase"
    static let newPassword = "a brand new passphrase"

    // MARK: 1. A stolen access token buys no password login

    /// A session past `tokens.recent-authentication` (a copied token, say) cannot add a way to sign in.
    @Test func aSessionWithoutARecentSignInCannotAttachAnAddress() async throws {
        try await withMailServer { client, server, peer in
            let victim = try await client.registerDevice()
            server.clock.advance(by: 601)
            let email = newAddress()
            let refused = try await client.register(email, Self.attackerPassword, bearer: victim.accessToken)
            #expect(refused.status == .forbidden)
            #expect(refused.envelope?.error.code == .reauthenticationRequired)
            #expect(try await Self.outbox(to: email, in: server).isEmpty)
            #expect(try await client.me(victim.accessToken).decode(UserProfile.self).email == nil)
        }
    }

    /// The attack as reported: a session exchanged from the victim's access code attaches the attacker's address and
    /// password. Such a session never shows a recent sign-in, even at once and even with its own bound key's proof.
    @Test func aSessionExchangedFromAnAccessCodeNeverAttachesAnAddress() async throws {
        try await withMailServer { client, server, peer in
            let victim = try await client.registerDevice()
            let (code, _) = try await server.services.accessCodes.issue(userID: victim.userID, expiresIn: nil, note: "support")
            let stolen = try await client.send(.post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: code))
                .decode(TokenPairResponse.self)
            let email = newAddress()
            let refused = try await client.register(email, Self.attackerPassword, bearer: stolen.accessToken)
            #expect(refused.status == .forbidden)
            #expect(refused.envelope?.error.code == .reauthenticationRequired)

            let key = DPoPKey()
            let body = String(decoding: try JSONEncoder().encode(AccessCodeExchangeRequest(accessCode: code)), as: UTF8.self)
            let exchangePath = "/api/v1/auth/access-code/exchange"
            let bound = try await client.sendProving(
                exchangePath, json: body, proof: try key.proof("POST", exchangePath, nonce: try await client.dpopNonce(), iat: server.clock.now())
            ).decode(TokenPairResponse.self)
            let registration = String(
                decoding: try JSONEncoder().encode(EmailRegistrationRequest(email: email, password: Self.attackerPassword)), as: UTF8.self)
            let proven = try await client.sendProving(
                "/api/v1/auth/register", json: registration,
                proof: try key.proof(
                    "POST", "/api/v1/auth/register", nonce: try await client.dpopNonce(), iat: server.clock.now()),
                bearer: bound.accessToken)
            #expect(proven.status == .forbidden)
            #expect(proven.envelope?.error.code == .reauthenticationRequired)
            #expect(try await Self.outbox(to: email, in: server).isEmpty)
            #expect(try await client.login(email, Self.attackerPassword).envelope?.error.code == .invalidCredentials)
        }
    }

    /// `users/me` shows the address and whether it is verified; the owner removes it with a recent sign-in: it signs in no
    /// more, the other sessions end, and the verified address is told.
    @Test func theOwnerSeesTheAddressAndRemovesItWithARecentSignIn() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let email = newAddress()
            #expect(try await client.register(email, Self.password, bearer: device.accessToken).status == .created)
            var profile = try await client.me(device.accessToken).decode(UserProfile.self)
            #expect(profile.email == email && profile.emailVerified == false)
            #expect(try await client.verify(email, code: try await peer.mail(to: email).code).status == .ok)
            profile = try await client.me(device.accessToken).decode(UserProfile.self)
            #expect(profile.email == email && profile.emailVerified == true)
            let passwordSession = try await client.login(email, Self.password).decode(TokenPairResponse.self)

            server.clock.advance(by: 601)
            let stale = try await client.send(.delete, "/api/v1/users/me/email", bearer: device.accessToken)
            #expect(stale.status == .forbidden)
            #expect(stale.envelope?.error.code == .reauthenticationRequired)

            let fresh = try await client.registerAgain(device)
            let removed = try await client.send(.delete, "/api/v1/users/me/email", bearer: fresh.accessToken)
            #expect(removed.status == .ok)
            let answer = try removed.decode(EmailRemovedResponse.self)
            #expect(answer.userID == device.userID && answer.email == email && answer.revokedSessions >= 1)
            #expect(try await client.refresh(passwordSession.refreshToken).status == .unauthorized)
            #expect(try await client.login(email, Self.password).envelope?.error.code == .invalidCredentials)
            #expect(try await client.me(fresh.accessToken).decode(UserProfile.self).email == nil)
            #expect(try await Self.subjects(to: email, peer: peer, count: 2).last == "Security notice: your Latchkey sign-in changed")
        }
    }

    /// Support removes an address someone attached: `latchkey users unset-email` (a real process) ends every session.
    @Test func unsetEmailRemovesTheAddressAndEndsEverySession() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.attackerPassword, peer: peer, bearer: device.accessToken)
            let run = try await AccountCLITests.cli(server, "users", "unset-email", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains(email) && run.stdout.contains("revoked 2 session(s)"), "\(run)")
            #expect(try await client.refresh(session.refreshToken).status == .unauthorized)
            #expect(try await client.login(email, Self.attackerPassword).envelope?.error.code == .invalidCredentials)
            let again = try await AccountCLITests.cli(server, "users", "unset-email", device.userID)
            #expect(again.exitCode != 0 && again.stderr.contains(device.userID), "\(again)")
        }
    }

    /// Adding a way to sign in (linking Sign in with Apple) and removing one (unlinking it) mail the account's verified
    /// address, so an owner hears of a way in someone else added.
    @Test(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
    func linkingAndUnlinkingAnIdentityTellTheVerifiedAddress() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.federated { $0.useMailPeer(peer) }
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer, bearer: device.accessToken)
            let nonce = UUID().uuidString
            let token = try await IdentityProviderPeer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: "link.\(UUID().uuidString)"))
            let linked = try await client.send(
                .post, "/api/v1/auth/apple", bearer: device.accessToken, body: AppleSignInRequest(identityToken: token, rawNonce: nonce))
            #expect(linked.status == .ok, "\(linked.text)")
            let notices = try await Self.texts(to: email, peer: peer, count: 2)
            #expect(notices.last?.contains("Sign in with Apple was linked to your account") == true)

            #expect(try await client.send(.delete, "/api/v1/users/me/identities/apple", bearer: device.accessToken).status == .ok)
            #expect(try await Self.texts(to: email, peer: peer, count: 3).last?.contains("apple sign-in was unlinked") == true)
        }
    }

    /// Revoking an access code lists an address the user got after the code was issued, for support to remove.
    @Test func revokingAnAccessCodeListsAnAddressAddedSinceItWasIssued() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let (_, record) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: nil)
            let email = newAddress()
            #expect(try await client.register(email, Self.password, bearer: device.accessToken).status == .created)
            let run = try await AccountCLITests.cli(server, "access-code", "revoke", record.id)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains(email) && run.stdout.contains("latchkey users unset-email \(device.userID)"), "\(run)")
        }
    }

    // MARK: 2. Account pre-hijacking

    /// The attacker attaches the victim's address to the attacker's device user. Unverified, it blocks nothing: the
    /// victim registers it, verifies it, and owns it; the attacker's registration of it is gone.
    @Test func anAddressAttachedUnverifiedBlocksTheRealOwnersRegistration() async throws {
        try await withMailServer { client, server, peer in
            let attacker = try await client.registerDevice()
            let email = newAddress()
            #expect(try await client.register(email, Self.attackerPassword, bearer: attacker.accessToken).status == .created)

            let registered = try await client.register(email, Self.password)
            #expect(registered.status == .created, "\(registered.text)")
            let victim = try registered.decode(EmailAccountResponse.self)
            #expect(victim.userID != attacker.userID)
            let code = try #require(try await peer.mails(to: email, count: 2).last).code
            let verified = try await client.verify(email, code: code)
            #expect(try verified.decode(EmailAccountResponse.self) == EmailAccountResponse(userID: victim.userID, email: email, emailVerified: true))

            #expect(try await client.login(email, Self.password).decode(TokenPairResponse.self).userID == victim.userID)
            #expect(try await client.login(email, Self.attackerPassword).envelope?.error.code == .invalidCredentials)
            #expect(try await client.me(attacker.accessToken).decode(UserProfile.self).email == nil)
        }
    }

    /// A code asked for again goes to the owner's own registration, never to one an attacker attached to another user
    /// after it (whose code, verified by the unsuspecting owner, would hand the attacker's device the address).
    @Test func aResentCodeIsForTheRegistrationThatCreatedItsUser() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let victim = try await client.register(email, Self.password).decode(EmailAccountResponse.self)
            server.clock.advance(by: 61)
            let attacker = try await client.registerDevice()
            #expect(try await client.register(email, Self.attackerPassword, bearer: attacker.accessToken).status == .created)
            server.clock.advance(by: 61)
            #expect(try await client.send(.post, "/api/v1/auth/resend-verification", body: EmailAddressRequest(email: email)).status == .accepted)
            let code = try #require(try await peer.mails(to: email, count: 3).last).code
            #expect(try await client.verify(email, code: code).decode(EmailAccountResponse.self).userID == victim.userID)
            #expect(try await client.me(attacker.accessToken).decode(UserProfile.self).email == nil)
        }
    }

    /// An address attached unverified to an existing user is nobody's: a reset of it is mailed to nobody, so it can
    /// neither verify the attacker's registration nor hand the victim the attacker's account.
    @Test func aResetOfAnAddressAttachedUnverifiedResetsNothing() async throws {
        try await withMailServer { client, server, peer in
            let attacker = try await client.registerDevice()
            let email = newAddress()
            #expect(try await client.register(email, Self.attackerPassword, bearer: attacker.accessToken).status == .created)
            server.clock.advance(by: 61)
            let requested = try await client.send(.post, "/api/v1/auth/reset-password", body: EmailAddressRequest(email: email))
            #expect(requested.status == .accepted)
            #expect(try await Self.outbox(to: email, in: server).map(\.purpose) == ["verify"])
        }
    }

    /// When the owner of the mailbox resets the password of an account a device user holds (the owner once followed the
    /// attacker's verification link, say), every session and every device credential of it ends: the attacker's device
    /// cannot sign back in with its secret.
    @Test func aResetSignsOutEveryDeviceOfTheAccount() async throws {
        try await withMailServer { client, server, peer in
            let attacker = try await client.registerDevice()
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.attackerPassword, peer: peer, bearer: attacker.accessToken)
            let mail = try await PasswordResetTests.resetMail(email, client: client, server: server, peer: peer)

            let confirmed = try await client.send(
                .post, "/api/v1/auth/reset-password/confirm",
                body: ResetPasswordConfirmRequest(email: email, code: mail.code, newPassword: Self.newPassword))
            #expect(confirmed.status == .ok)
            #expect(
                try confirmed.decode(PasswordChangedResponse.self)
                    == PasswordChangedResponse(userID: attacker.userID, revokedSessions: 2, revokedDevices: 1))
            let back = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: attacker.userID, deviceSecret: attacker.deviceSecret))
            #expect(back.status == .unauthorized)
            #expect(back.envelope?.error.code == .invalidDeviceSecret)
            #expect(try await client.login(email, Self.newPassword).decode(TokenPairResponse.self).userID == attacker.userID)
        }
    }

    /// A password change keeps the device that proves its own key in the request; a device that proves none (a keyless
    /// one) loses its secret like every other. The verified address is told.
    @Test func aPasswordChangeKeepsOnlyTheDeviceThatProvesItsKey() async throws {
        try await withMailServer { client, server, peer in
            let key = DPoPKey()
            let device = try await client.registerDevice(key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer, bearer: device.accessToken)
            let path = "/api/v1/auth/change-password"
            let body = String(
                decoding: try JSONEncoder().encode(ChangePasswordRequest(currentPassword: Self.password, newPassword: Self.newPassword)),
                as: UTF8.self)
            let changed = try await client.sendProving(
                path, json: body,
                proof: try key.proof("POST", path, nonce: try await client.dpopNonce(), iat: server.clock.now()),
                bearer: device.accessToken)
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(try changed.decode(PasswordChangedResponse.self).revokedDevices == 0)
            #expect(try await client.registerDevice(UUID(uuidString: device.userID)!, key: key, at: server.clock.now()).status == .ok)
            #expect(try await Self.subjects(to: email, peer: peer, count: 2).last == "Security notice: your Latchkey sign-in changed")

            let keyless = try await client.registerDevice()
            let other = newAddress()
            _ = try await client.verifiedAccount(other, Self.password, peer: peer, bearer: keyless.accessToken)
            let unproven = try await client.send(
                .post, path, bearer: keyless.accessToken,
                body: ChangePasswordRequest(currentPassword: Self.password, newPassword: Self.newPassword))
            #expect(try unproven.decode(PasswordChangedResponse.self).revokedDevices == 1)
            let back = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: keyless.userID, deviceSecret: keyless.deviceSecret))
            #expect(back.envelope?.error.code == .invalidDeviceSecret)
        }
    }

    /// Support's `latchkey users set-password` (a real process) gives the account back whole too: every session and device
    /// credential ends, and the verified address is told.
    @Test func setPasswordSignsOutEveryDeviceAndTellsTheAddress() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer, bearer: device.accessToken)
            let run = try await AccountCLITests.cli(server, input: Self.newPassword + "\n", "users", "set-password", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("revoked 2 session(s) and signed out 1 device(s)"), "\(run)")
            let back = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            #expect(back.envelope?.error.code == .invalidDeviceSecret)
            server.clock.advance(by: 60)  // the server's poll (on its clock) finds the notice the CLI queued
            #expect(try await Self.subjects(to: email, peer: peer, count: 2).last == "Security notice: your Latchkey sign-in changed")
        }
    }

    // MARK: 8. No enumeration at registration

    /// A registration of an address another account verified answers as any other (201, check your mail); the owner is
    /// mailed that someone tried, and nothing of the owner's changes.
    @Test func registeringATakenAddressAnswersAsAnyOtherAndTellsTheOwner() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let owner = try await client.verifiedAccount(email, Self.password, peer: peer)
            server.clock.advance(by: 61)

            let taken = try await client.register(email.uppercased(), Self.attackerPassword)
            let freshAddress = newAddress()
            let fresh = try await client.register(freshAddress, Self.attackerPassword)
            #expect(taken.status == .created && fresh.status == .created, "\(taken.text)")
            let account = try taken.decode(EmailAccountResponse.self)
            #expect(account.userID != owner.userID && !account.emailVerified)
            #expect(Set(try Self.keys(of: taken)) == Set(try Self.keys(of: fresh)))

            #expect(
                try await Self.subjects(to: email, peer: peer, count: 2).last == "Someone tried to sign up for Latchkey with your address")
            #expect(try await client.login(email, Self.password).decode(TokenPairResponse.self).userID == owner.userID)
            // Signing in with the password just registered tells nothing either: not verified, as for a free address.
            #expect(try await client.login(email, Self.attackerPassword).envelope?.error.code == .emailNotVerified)
            #expect(try await client.login(freshAddress, Self.attackerPassword).envelope?.error.code == .emailNotVerified)
            #expect(try await client.login(email, "yet another passphrase").envelope?.error.code == .invalidCredentials)
            #expect(try await client.me(owner.accessToken).status == .ok)
        }
    }

    /// With `email.reveal-existing` the old answer stays: 422 `email_taken`, nothing stored, nothing mailed.
    @Test func revealExistingKeepsTheOldAnswer() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make {
            $0.useMailPeer(peer)
            $0.email.revealExisting = true
        }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            let taken = try await client.register(email, Self.attackerPassword)
            #expect(taken.status == .unprocessableContent)
            #expect(taken.envelope?.error.code == .emailTaken)
            #expect(try await Self.outbox(to: email, in: server).map(\.purpose) == ["verify"])
        }
    }

    // MARK: Helpers

    /// The outbox rows to `recipient` (written in the transaction of what caused them, so no wait is needed).
    static func outbox(to recipient: String, in server: TestServer) async throws -> [OutboxEntry] {
        try await server.services.store.outbox(limit: 1000, pendingOnly: false).filter { $0.recipient == recipient }
    }

    /// The subjects of the first `count` mails delivered to `recipient` (waiting for them, up to 20 s).
    static func subjects(to recipient: String, peer: SMTPPeer, count: Int) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let delivered = try await peer.messages(to: recipient, wait: .seconds(10))
            if delivered.count >= count || ContinuousClock.now > deadline {
                return delivered.prefix(count).map { EncodedWordDecoder.decode(RenderedMessage($0.raw).headers["subject"] ?? "") }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The plain-text parts of the first `count` mails delivered to `recipient` (waiting for them, up to 20 s).
    static func texts(to recipient: String, peer: SMTPPeer, count: Int) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let delivered = try await peer.messages(to: recipient, wait: .seconds(10))
            if delivered.count >= count || ContinuousClock.now > deadline {
                return delivered.prefix(count).map { message in
                    RenderedMessage(message.raw).parts().first { $0.headers["content-type"]?.hasPrefix("text/plain") == true }?.decodedBody ?? ""
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func keys(of response: TestResponse) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
        return Array((object ?? [:]).keys)
    }
}
