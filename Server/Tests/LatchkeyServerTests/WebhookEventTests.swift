import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Issue 35, the events: what the app's backend hears, over HTTP on a real socket, when identity changes. Each event is
/// `{"type", "timestamp", "data"}`, signed the Standard Webhooks way (checked by the receiver on its own), `data` with
/// `user_id` and IDs and kinds only.
@Suite(.timeLimit(.minutes(1)))
struct WebhookEventTests {
    @Test func registeringADeviceTellsUserCreatedWithItsKindAndSessionCreated() async throws {
        try await withWebhookServer { client, server, receiver in
            let device = try await client.registerDevice()
            let created = try await receiver.waitFor("user.created", data: ["user_id": device.userID])
            #expect(created.data["kind"] as? String == "device", "\(created.text)")
            #expect(Set(created.json.keys) == ["type", "timestamp", "data"], "\(created.text)")
            #expect(created.verified, "the receiver could not verify \(created.signature)")
            let timestamp = try #require(created.json["timestamp"] as? String)
            #expect(Self.rfc3339(timestamp) != nil, "\(timestamp)")
            let session = try await receiver.waitFor("session.created", data: ["user_id": device.userID, "session_id": device.sessionID])
            #expect(session.verified)
            try await server.webhooksSettled()
            #expect(receiver.deliveries(ofType: "user.created").count == 1)
            #expect(receiver.deliveries.allSatisfy { $0.verified })
        }
    }

    @Test func aReturningDeviceAndALoginStartSessionsButARefreshDoesNot() async throws {
        try await withWebhookServer { client, server, receiver in
            let first = try await client.registerDevice()
            let again = try await client.registerAgain(first)
            let refreshed = try await client.refresh(again.refreshToken)
            #expect(refreshed.status == .ok)
            try await receiver.waitFor("session.created", data: ["session_id": again.sessionID, "user_id": first.userID])
            try await server.webhooksSettled()
            let sessions = receiver.deliveries(ofType: "session.created").compactMap { $0.data["session_id"] as? String }
            #expect(sessions.sorted() == [first.sessionID, again.sessionID].sorted(), "a refresh is no new session: \(sessions)")
            #expect(receiver.deliveries(ofType: "user.created").count == 1, "a returning device is no new user")
        }
    }

    @Test func logoutTellsSessionRevokedWithReasonLogoutAndGlobalLogoutTellsLogoutGlobal() async throws {
        try await withWebhookServer { client, server, receiver in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken).status == .ok)
            try await receiver.waitFor("session.revoked", data: ["user_id": device.userID, "session_id": device.sessionID, "reason": "logout"])

            let other = try await client.registerDevice()
            let second = try await client.registerAgain(other)
            let global = try await client.send(.post, "/api/v1/auth/logout", bearer: second.accessToken, body: LogoutRequest(scope: .global))
            #expect(global.status == .ok)
            for session in [other.sessionID, second.sessionID] {
                try await receiver.waitFor("session.revoked", data: ["user_id": other.userID, "session_id": session, "reason": "logout_global"])
            }
            try await server.webhooksSettled()
            #expect(receiver.deliveries(ofType: "session.revoked").count == 3)
        }
    }

    @Test func deletingTheUserTellsUserDeletedAndRevokesItsSessionsWithReasonDeleted() async throws {
        try await withWebhookServer { client, _, receiver in
            let device = try await client.registerDevice()
            let deleted = try await client.send(.delete, "/api/v1/users/me", bearer: device.accessToken)
            #expect(deleted.status.code < 300, "\(deleted.text)")
            try await receiver.waitFor("user.deleted", data: ["user_id": device.userID])
            try await receiver.waitFor("session.revoked", data: ["user_id": device.userID, "session_id": device.sessionID, "reason": "deleted"])
        }
    }

    @Test func addingAndRemovingAPasskeyAreTold() async throws {
        try await withWebhookServer(configure: PasskeyHappyPathTests.configure) { client, _, receiver in
            let device = try await client.registerDevice()
            var authenticator = SoftwareAuthenticator()
            let creation = try await PasskeyHappyPathTests.registrationOptions(client, bearer: device.accessToken)
            let challenge = try #require(LatchkeyAPI.Base64URL.decode(creation.options.challenge))
            let registration = authenticator.register(
                rpID: "localhost", origin: PasskeyHappyPathTests.origin, challenge: challenge,
                userHandle: PasskeyHappyPathTests.userHandle(device.userID))
            let added = try await client.send(
                .post, "/api/v1/passkeys/register", bearer: device.accessToken,
                json: PasskeyHappyPathTests.body(challengeID: creation.challengeID, credential: registration.registrationResponseJSON()))
            #expect(added.status == .created, "\(added.text)")
            let passkey = try added.decode(PasskeyResponse.self)
            try await receiver.waitFor("passkey.added", data: ["user_id": device.userID, "passkey_id": passkey.passkeyID])
            let removed = try await client.send(.delete, "/api/v1/passkeys/\(passkey.passkeyID)", bearer: device.accessToken)
            #expect(removed.status == .noContent)
            try await receiver.waitFor("passkey.removed", data: ["user_id": device.userID, "passkey_id": passkey.passkeyID])
        }
    }

    /// Attaching an email to a device user and verifying it: `user.updated`, once per committed change; a wrong code
    /// (nothing committed) tells nothing. No body holds the password, the code or a token.
    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
    func verifyingAnAttachedEmailTellsUserUpdatedOnceAndNoBodyHoldsASecret() async throws {
        let peer = try await SMTPPeer.shared()
        let password = "correct horse battery staple"
        try await withWebhookServer(configure: { $0.useMailPeer(peer) }) { client, server, receiver in
            let device = try await client.registerDevice()
            let email = newAddress()
            #expect(try await client.register(email, password, bearer: device.accessToken).status == .created)
            let code = try await peer.mail(to: email).code
            let wrong = code == "000000" ? "111111" : "000000"
            #expect(try await client.verify(email, code: wrong).status.code >= 400)
            try await server.webhooksSettled()
            #expect(
                !receiver.deliveries(ofType: "user.updated").contains { $0.data["change"] as? String == "email_verified" },
                "a refused code changed nothing")
            let updatesBefore = receiver.deliveries(ofType: "user.updated").count

            #expect(try await client.verify(email, code: code).status == .ok)
            try await receiver.waitFor("user.updated", data: ["user_id": device.userID, "change": "email_verified"])
            let session = try await client.login(email, password).decode(TokenPairResponse.self)
            try await receiver.waitFor("session.created", data: ["user_id": device.userID, "session_id": session.sessionID])
            try await server.webhooksSettled()
            let updates = receiver.deliveries(ofType: "user.updated")
            #expect(updates.count == updatesBefore + 1, "one verification, one user.updated: \(updates.map(\.text))")

            let secrets = [
                password, code, device.accessToken, device.refreshToken, try #require(device.deviceSecret), session.accessToken,
                session.refreshToken,
            ]
            for delivery in receiver.deliveries {
                for secret in secrets { #expect(!delivery.text.contains(secret), "\(delivery.type ?? "?") carries a secret: \(delivery.text)") }
                #expect(!delivery.text.contains(email), "\(delivery.type ?? "?") carries the address: \(delivery.text)")
            }
        }
    }

    @Test func noBodyHoldsATokenOrTheDeviceSecret() async throws {
        try await withWebhookServer { client, server, receiver in
            let device = try await client.registerDevice()
            let again = try await client.registerAgain(device)
            let refreshed = try await client.refresh(again.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: refreshed.accessToken).status == .ok)
            #expect(try await client.send(.delete, "/api/v1/users/me", bearer: device.accessToken).status.code < 300)
            try await receiver.waitFor("user.deleted", data: ["user_id": device.userID])
            try await server.webhooksSettled()
            let secrets = [
                device.accessToken, device.refreshToken, try #require(device.deviceSecret), again.accessToken, again.refreshToken,
                refreshed.accessToken, refreshed.refreshToken,
            ]
            #expect(receiver.deliveries.count >= 5)
            for delivery in receiver.deliveries {
                #expect(delivery.data["user_id"] as? String == device.userID, "\(delivery.text)")
                for secret in secrets { #expect(!delivery.text.contains(secret), "\(delivery.type ?? "?") carries a secret: \(delivery.text)") }
                // Values are IDs and kinds: short strings, nothing like a token.
                for (key, value) in delivery.data { #expect((value as? String).map { $0.count <= 64 } == true, "\(key) = \(value)") }
            }
        }
    }

    /// An RFC 3339 date, with or without fractional seconds.
    static func rfc3339(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }
}
