import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// `latchkey users show <id>` lists the user's passkeys (issue 33): the built executable against a live server's
/// database.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyCLITests {
    /// A time as the CLI prints it.
    static func text(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    @Test func usersShowListsThePasskeysWithNameCreatedLastUsedAndBackedUp() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.live) { client in
            var phone = SoftwareAuthenticator()
            var key = SoftwareAuthenticator(backupEligible: false, backedUp: false)
            let (device, first) = try await client.deviceUserWithPasskey(&phone)
            server.clock.advance(by: 60)
            let second = try await client.addPasskey(&key, bearer: device.accessToken, name: "Work \"key\"")
            server.clock.advance(by: 60)
            #expect(try await client.signInWithPasskey(&phone).status == .ok)

            let run = try await server.cli("users", "show", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdoutLines.contains("passkeys: 2"), "\(run)")
            #expect(
                run.stdoutLines.contains(
                    "  \(first.passkeyID) \"Passkey\" created \(Self.text(first.createdAt)), last used \(Self.text(server.clock.now())), backed up yes"
                ),
                "\(run)")
            #expect(
                run.stdoutLines.contains(
                    "  \(second.passkeyID) \"Work \"key\"\" created \(Self.text(second.createdAt)), last used never, backed up no"),
                "\(run)")
            // Nothing of the credential itself.
            #expect(!run.stdout.contains(LatchkeyAPI.Base64URL.encode(phone.credentialID)))
        }
    }

    @Test func usersShowSaysAUserHasNoPasskeys() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let run = try await server.cli("users", "show", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdoutLines.contains("passkeys: 0"), "\(run)")
        }
    }

    @Test func usersShowJSONHasThePasskeys() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.live) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let run = try await server.cli("users", "show", device.userID, "--json")
            #expect(run.exitCode == 0, "\(run)")
            let user = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run)")
            let passkeys = try #require(user["passkeys"] as? [[String: Any]], "\(run)")
            #expect(passkeys.count == 1)
            #expect(Set(passkeys.first?.keys.map { $0 } ?? []) == ["id", "name", "created_at", "backed_up"], "\(run)")
            #expect(passkeys.first?["id"] as? String == passkey.passkeyID)
            #expect(passkeys.first?["name"] as? String == "Passkey")
            #expect(passkeys.first?["backed_up"] as? Bool == true)
        }
    }
}
