import Foundation
import Testing

@testable import LatchkeyServer

/// The passkey store's rules on each database: a challenge is taken once, the counter's compare-and-set lets one of two
/// racing sign-ins through, a credential ID is registered once, and passkeys go with their user.
extension StoreContract {
    private static let epoch = Date(timeIntervalSince1970: 1_900_000_000)

    private static func newUser(_ store: SQLLatchkeyStore) async throws -> String {
        let id = UUID().uuidString.lowercased()
        #expect(try await store.registerUser(id: id, kind: .device, at: Self.epoch))
        return id
    }

    private static func passkey(
        user: String, credentialID: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }, signCount: UInt32 = 0
    )
        -> PasskeyRecord
    {
        PasskeyRecord(
            id: UUID().uuidString.lowercased(), userID: user, credentialID: credentialID, publicKey: [0xa5, 0x01, 0x02], algorithm: -7,
            signCount: signCount, backupEligible: true, backedUp: false, aaguid: Array(repeating: 0, count: 16), attestationFormat: "none",
            transports: ["internal", "hybrid"], name: "iPhone", createdAt: Self.epoch, lastUsedAt: nil)
    }

    private static func session(user: String, device: String? = nil) -> NewSession {
        NewSession(
            id: UUID().uuidString.lowercased(), userID: user, deviceID: device, createdAt: Self.epoch.addingTimeInterval(10),
            refreshTokenHash: "hash-" + UUID().uuidString, refreshTokenExpiresAt: Self.epoch.addingTimeInterval(3600), amr: [.hardwareKey, .user],
            aal2At: Self.epoch.addingTimeInterval(10))
    }

    private static func use(_ passkey: PasskeyRecord, count: UInt32) -> PasskeyUse {
        PasskeyUse(passkeyID: passkey.id, storedSignCount: passkey.signCount, signCount: count, backedUp: true, at: Self.epoch.addingTimeInterval(10))
    }

    static let passkeys: [StoreContract] = [
        StoreContract("passkeys: a passkey reads back whole, its credential ID is registered once, and it goes with its user") { store async throws in
            let user = try await Self.newUser(store)
            let passkey = Self.passkey(user: user)
            #expect(try await store.addPasskey(passkey) == .added)
            #expect(try await store.passkeys(ofUser: user) == [passkey])
            #expect(try await store.passkey(credentialID: passkey.credentialID) == passkey)
            let other = try await Self.newUser(store)
            #expect(try await store.addPasskey(Self.passkey(user: other, credentialID: passkey.credentialID)) == .credentialExists)
            #expect(try await store.renamePasskey(id: passkey.id, userID: other, name: "Stolen") == nil)
            #expect(try await store.renamePasskey(id: passkey.id, userID: user, name: "Work")?.name == "Work")
            #expect(try await store.deleteUser(id: user, at: Self.epoch.addingTimeInterval(1)) != nil)
            #expect(try await store.passkey(credentialID: passkey.credentialID) == nil)
            #expect(try await store.addPasskey(Self.passkey(user: user)) == .userGone)
        },
        StoreContract("passkeys: of concurrent takers of one challenge exactly one gets it") { store async throws in
            let challenge = PasskeyChallengeRecord(
                idHash: "challenge-" + UUID().uuidString, ceremony: .authentication, challenge: Array(repeating: 7, count: 32), userID: nil,
                sessionID: nil, createdAt: Self.epoch, expiresAt: Self.epoch.addingTimeInterval(300))
            try await store.storeChallenge(challenge)
            let taken = try await withThrowingTaskGroup(of: PasskeyChallengeRecord?.self) { group in
                for _ in 0..<8 { group.addTask { try await store.takeChallenge(idHash: challenge.idHash) } }
                var taken: [PasskeyChallengeRecord] = []
                for try await result in group { if let result { taken.append(result) } }
                return taken
            }
            #expect(taken == [challenge])
        },
        StoreContract("passkeys: of two sign-ins checked against one counter one moves it; the other writes nothing") { store async throws in
            let user = try await Self.newUser(store)
            let passkey = Self.passkey(user: user, signCount: 4)
            #expect(try await store.addPasskey(passkey) == .added)
            let sessions = [Self.session(user: user), Self.session(user: user)]
            let outcomes = try await withThrowingTaskGroup(of: PasskeySignIn.self) { group in
                for session in sessions {
                    group.addTask { try await store.signIn(with: Self.use(passkey, count: 5), session: session, joining: nil) }
                }
                var outcomes: [PasskeySignIn] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == .signedIn(.started, newDevice: false) }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == .counterChanged }.count == 1, "\(outcomes)")
            let stored = try #require(try await store.passkeys(ofUser: user).first)
            #expect(stored.signCount == 5 && stored.backedUp && stored.lastUsedAt != nil)
            let live = try await sessions.asyncFilter { try await store.session(id: $0.id) != nil }
            #expect(live.count == 1)
        },
        StoreContract("passkeys: a sign-in joins a new device to the user, and refuses another user's device with nothing written") {
            store async throws in
            let user = try await Self.newUser(store)
            let passkey = Self.passkey(user: user, signCount: 1)
            #expect(try await store.addPasskey(passkey) == .added)
            let phone = UUID().uuidString.lowercased()
            let device = DeviceRecord(
                id: phone, userID: user, secretHash: "secret", createdAt: Self.epoch.addingTimeInterval(10), lastSeenAt: nil, keyThumbprint: "key")
            let joined = try await store.signIn(with: Self.use(passkey, count: 2), session: Self.session(user: user, device: phone), joining: device)
            #expect(joined == .signedIn(.started, newDevice: true))
            #expect(try await store.device(id: phone)?.userID == user)
            #expect(try await store.device(id: phone)?.keyThumbprint == "key")

            let stranger = try await Self.newUser(store)
            var foreign = device
            foreign.id = stranger
            let session = Self.session(user: user, device: stranger)
            let refused = try await store.signIn(with: Self.use(passkey, count: 3), session: session, joining: foreign)
            #expect(refused == .deviceClaimed)
            #expect(try await store.session(id: session.id) == nil)
            #expect(try await store.passkeys(ofUser: user).first?.signCount == 2)
        },
    ]
}

extension Array {
    fileprivate func asyncFilter(_ isIncluded: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await isIncluded(element) { kept.append(element) }
        return kept
    }
}
