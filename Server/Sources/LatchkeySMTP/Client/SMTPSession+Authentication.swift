#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SMTPSession {
    /// AUTH PLAIN (RFC 4616) when offered, otherwise AUTH LOGIN; a `235` reply ends either.
    mutating func authenticate(_ credentials: SMTPConfiguration.Credentials, mechanisms: Set<String>) async throws {
        if mechanisms.contains("PLAIN") {
            let response = Self.base64("\0\(credentials.username)\0\(credentials.password)")
            self.secrets.append(response)
            try await self.expectAuthenticated(.authenticate(mechanism: "PLAIN", initialResponse: response))
        } else if mechanisms.contains("LOGIN") {
            // The challenges are "Username:" and "Password:" in base64; answered in that order.
            let username = Self.base64(credentials.username)
            let password = Self.base64(credentials.password)
            self.secrets += [username, password]
            try await self.expectChallenge(.authenticate(mechanism: "LOGIN", initialResponse: nil))
            try await self.expectChallenge(.authenticationResponse(username))
            try await self.expectAuthenticated(.authenticationResponse(password))
        } else {
            let offered = mechanisms.isEmpty ? "no AUTH" : "only AUTH \(mechanisms.sorted().joined(separator: " "))"
            throw SMTPError(
                .authenticationNotOffered,
                stage: .authentication,
                detail: "credentials are configured but the server offers \(offered)"
            )
        }
    }

    private mutating func expectChallenge(_ command: SMTPCommand) async throws {
        let reply = try await self.exchange(command, stage: .authentication)
        guard reply.code == 334 else { throw self.authenticationFailure(reply) }
    }

    private mutating func expectAuthenticated(_ command: SMTPCommand) async throws {
        let reply = try await self.exchange(command, stage: .authentication)
        guard reply.code == 235 else { throw self.authenticationFailure(reply) }
    }

    private func authenticationFailure(_ reply: SMTPReply) -> SMTPError {
        guard reply.code >= 400 else { return self.failure(.unexpectedReply, reply, stage: .authentication) }
        return SMTPError(
            .authenticationFailed,
            stage: .authentication,
            detail: "the server refused the credentials",
            reply: reply,
            redacting: self.secrets
        )
    }

    private static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }
}
