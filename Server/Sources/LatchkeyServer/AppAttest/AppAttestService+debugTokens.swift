import Foundation

extension AppAttestService {
    /// Mints a debug token named `name`: its ID and the secret, which is shown only now (kept as SHA-256).
    package func createDebugToken(name: String) async throws -> (id: String, token: String) {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100 else { throw ServiceError.invalidRequest("A debug token needs a name of 1 to 100 characters.") }
        let id = UUID().uuidString.lowercased()
        let token = "aadt_" + Secret.generate()
        try await self.store.createDebugToken(id: id, name: name, tokenHash: Secret.hash(token), at: self.clock.now())
        return (id, token)
    }

    /// Every debug token, oldest first, without secrets.
    package func debugTokens() async throws -> [AppAttestDebugTokenRecord] { try await self.store.debugTokens() }

    /// Revokes debug token `id`: it attests no device from now on (devices it attested need it for each guest token).
    package func revokeDebugToken(id: String) async throws {
        guard try await self.store.revokeDebugToken(id: id, at: self.clock.now()) else {
            throw ServiceError.notFound("No debug token with ID \(id) that is not revoked already.")
        }
    }
}
