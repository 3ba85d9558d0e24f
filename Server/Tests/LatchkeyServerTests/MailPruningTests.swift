import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// What email accounts leave behind is pruned (`prune.sent-mail-after`, `prune.unverified-accounts-after`): sent mails,
/// expired codes, and addresses registered without a session and never verified, with the users made for them.
@Suite struct MailPruningTests {
    static let password = "correct horse battery staple"

    @Test func sentMailsExpiredCodesAndAbandonedRegistrationsArePrunedAndNothingElse() async throws {
        try await withMailServer { client, server, peer in
            let abandoned = newAddress()
            let account = try await client.register(abandoned, Self.password).decode(EmailAccountResponse.self)
            let device = try await client.registerDevice()
            let attached = newAddress()
            #expect(try await client.register(attached, Self.password, bearer: device.accessToken).status == .created)
            let kept = newAddress()
            _ = try await client.verifiedAccount(kept, Self.password, peer: peer)
            for recipient in [abandoned, attached, kept] {
                _ = try await outboxEntry(to: recipient, in: server) { $0.state == "sent" }
            }
            // The deliverer fans the webhook outbox out on its own tick: done here first, so each prune sees it settled.
            await server.services.webhooks.deliverDue()
            #expect(try await server.services.pruner.prune().total == 0)  // nothing is old yet

            server.clock.advance(by: 7 * 86_400 + 1)
            await server.services.webhooks.deliverDue()
            let counts = try await server.services.pruner.prune()
            #expect(counts.sentMails == 3)
            #expect(counts.emailCodes == 2)  // the two unverified addresses' verification codes
            #expect(counts.unverifiedAccounts == 1)
            #expect(counts.users == 1)
            #expect(try await server.services.store.user(id: account.userID) == nil)
            #expect(try await server.services.store.outbox(limit: 100, pendingOnly: false).isEmpty)
            // The verified account and the device (whose user an unverified address was attached to) stay.
            #expect(try await client.login(kept, Self.password).status == .ok)
            #expect(try await server.services.store.user(id: device.userID) != nil)
            #expect(try await client.refresh(device.refreshToken).status == .ok)
            await server.services.webhooks.deliverDue()
            #expect(try await server.services.pruner.prune().total == 0)
        }
    }

    @Test func anUnverifiedRegistrationWithALiveCodeIsKept() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let account = try await client.register(email, Self.password).decode(EmailAccountResponse.self)
            _ = try await peer.mail(to: email)
            server.clock.advance(by: 7 * 86_400 + 1)
            // A new code, asked for late: the verification is under way.
            let resent = try await client.send(.post, "/api/v1/auth/resend-verification", body: EmailAddressRequest(email: email))
            #expect(resent.status == .accepted)
            #expect(try await server.services.pruner.prune().users == 0)
            #expect(try await server.services.store.user(id: account.userID) != nil)
        }
    }
}
