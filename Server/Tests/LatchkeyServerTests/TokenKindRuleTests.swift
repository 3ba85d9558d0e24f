import Foundation
import HTTPTypes
import LatchkeyAPI
import Testing

/// Which kinds of token a route takes is decided once, by the route's token requirement (``RequireToken``), before any
/// service runs: a guest token or an access code's token is 403 `forbidden` with the route's reason, and nothing changes.
@Suite struct TokenKindRuleTests {
    static let password = "correct horse battery staple"

    @Test func onlyASessionAddsChangesOrRemovesAnEmailAddress() async throws {
        try await withMailServer { client, server, _ in
            let device = try await client.registerDevice()
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
                .decode(GuestSessionResponse.self).accessToken
            let (code, _) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: "support")

            for bearer in [guest, code] {
                let register = try await client.register("kind-\(UUID().uuidString.prefix(8))@example.com", Self.password, bearer: bearer)
                #expect(register.status == .forbidden)
                #expect(register.envelope?.error.code == .forbidden)
                #expect(register.envelope?.error.message.contains("Only a signed-in user's session can add an email address") == true)

                let change = try await client.send(
                    .post, "/api/v1/auth/change-password", bearer: bearer,
                    body: ChangePasswordRequest(currentPassword: Self.password, newPassword: "another horse battery"))
                #expect(change.status == .forbidden)
                #expect(change.envelope?.error.message == "Only the account's own session can change its password.")

                let remove = try await client.send(.delete, "/api/v1/users/me/email", bearer: bearer)
                #expect(remove.status == .forbidden)
                #expect(remove.envelope?.error.message == "Only the account's own session can remove its email address.")
            }
            #expect(try await server.services.accounts.account(userID: device.userID) == nil)
        }
    }
}
