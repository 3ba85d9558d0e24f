import Foundation
import Testing

@testable import LatchkeyServer

/// The App Attest store's rules on each database: a challenge is taken once, of two assertions with one counter one
/// wins, a key ID belongs to one device, and revoking a debug token ends what it attested.
extension StoreContract {
    private static let attestedAt = Date(timeIntervalSince1970: 1_900_000_000)

    private static func key(
        device: String = UUID().uuidString.lowercased(), keyID: String = UUID().uuidString, userID: String? = nil
    ) -> AppAttestKeyRecord {
        AppAttestKeyRecord(
            deviceID: device, keyID: keyID, publicKey: Array(repeating: 4, count: 65), counter: 0, receipt: [1, 2, 3],
            appID: "ABCDE12345.com.example.app", method: .attestation, debugTokenID: nil, attestedAt: Self.attestedAt, userID: userID)
    }

    static let appAttest: [StoreContract] = [
        StoreContract("app attest: of concurrent takers of one challenge exactly one gets it") { store async throws in
            let id = "challenge-" + UUID().uuidString
            try await store.storeChallenge(idHash: id, expiresAt: Self.attestedAt.addingTimeInterval(300))
            let taken = try await withThrowingTaskGroup(of: Date?.self) { group in
                for _ in 0..<8 { group.addTask { try await store.takeChallenge(idHash: id) } }
                return try await group.reduce(into: [Date]()) { if let date = $1 { $0.append(date) } }
            }
            #expect(taken == [Self.attestedAt.addingTimeInterval(300)])
        },
        StoreContract("app attest: a key reads back whole; of two assertions with one counter one wins") { store async throws in
            let user = UUID().uuidString.lowercased()
            let key = Self.key(userID: user)
            try await store.storeAttestedKey(key)
            #expect(try await store.attestedKey(deviceID: key.deviceID) == key)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { try await store.advanceCounter(deviceID: key.deviceID, to: 1) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            #expect(try await store.advanceCounter(deviceID: key.deviceID, to: 1) == false)
            #expect(try await store.advanceCounter(deviceID: key.deviceID, to: 2))
            #expect(try await store.attestedDevices(among: [key.deviceID, UUID().uuidString.lowercased()], userID: user) == [key.deviceID])
            // Attested for the user whose registration proved the key only.
            #expect(try await store.attestedDevices(among: [key.deviceID], userID: UUID().uuidString.lowercased()).isEmpty)
        },
        StoreContract("app attest: a key ID is one device's; only the device's own user replaces its key") { store async throws in
            let user = UUID().uuidString.lowercased()
            let key = Self.key(userID: user)
            try await store.storeAttestedKey(key)
            await #expect(throws: AppAttestKeyInUse.self) { try await store.storeAttestedKey(Self.key(keyID: key.keyID)) }
            #expect(try await store.deviceID(attestedWith: key.keyID) == key.deviceID)
            // Another key for the device: not from a guest request, not from another user.
            await #expect(throws: AppAttestKeyInUse.self) { try await store.storeAttestedKey(Self.key(device: key.deviceID)) }
            await #expect(throws: AppAttestKeyInUse.self) {
                try await store.storeAttestedKey(Self.key(device: key.deviceID, userID: UUID().uuidString.lowercased()))
            }
            #expect(try await store.attestedKey(deviceID: key.deviceID) == key)
            let renewed = Self.key(device: key.deviceID, userID: user)
            try await store.storeAttestedKey(renewed)
            #expect(try await store.attestedKey(deviceID: key.deviceID) == renewed)
            // A guest's key (no user) is bound to the user who registers the device with that same key.
            let guestKey = Self.key()
            try await store.storeAttestedKey(guestKey)
            var claimed = guestKey
            claimed.userID = user
            try await store.storeAttestedKey(claimed)
            #expect(try await store.attestedKey(deviceID: guestKey.deviceID)?.userID == user)
        },
        StoreContract("app attest: a revoked debug token attests nothing and its devices are no longer attested") { store async throws in
            let id = UUID().uuidString.lowercased()
            try await store.createDebugToken(id: id, name: "CI", tokenHash: "hash-" + id, at: Self.attestedAt)
            #expect(try await store.useDebugToken(hash: "hash-" + id, at: Self.attestedAt.addingTimeInterval(1))?.lastUsedAt != nil)
            var key = Self.key(keyID: "debug-token:" + id)
            key.method = .debugToken
            key.debugTokenID = id
            try await store.storeAttestedKey(key)
            #expect(try await store.revokeDebugToken(id: id, at: Self.attestedAt.addingTimeInterval(2)))
            #expect(try await store.revokeDebugToken(id: id, at: Self.attestedAt.addingTimeInterval(3)) == false)
            #expect(try await store.useDebugToken(hash: "hash-" + id, at: Self.attestedAt.addingTimeInterval(4)) == nil)
            #expect(try await store.attestedKey(deviceID: key.deviceID) == nil)
            #expect(try await store.debugTokens().first { $0.id == id }?.revokedAt != nil)
        },
    ]
}
