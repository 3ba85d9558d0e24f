import Foundation
import SQLKit

extension SQLLatchkeyStore {
    /// Records `proof`'s `jti` inside the caller's transaction; throws ``DPoPRejection/replayed`` (rolling the
    /// transaction back) when it was recorded before.
    static func spend(_ proof: VerifiedProof?, on sql: any SQLDatabase) async throws {
        guard let proof else { return }
        let fresh =
            try await sql.raw(
                """
                INSERT INTO dpop_proofs (jti_hash, expires_at) VALUES (\(bind: proof.tokenIDHash), \(bind: proof.expiresAt.stored))
                ON CONFLICT (jti_hash) DO NOTHING RETURNING jti_hash
                """
            ).first() != nil
        guard fresh else { throw DPoPRejection.replayed }
    }

    package func spendProof(_ proof: VerifiedProof) async throws {
        try await self.database.transaction { sql in try await Self.spend(proof, on: sql) }
    }
}
