import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// What the server keeps of a passkey and checks at each sign-in: the signature counter (a clone is refused and
/// audited), and whether the credential and its user still exist.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyCredentialTests {
    /// Where the counter of the refused assertion stands against the stored 5.
    enum StaleCounter: UInt32, CaseIterable, CustomStringConvertible {
        case equal = 5
        case lower = 3
        case zero = 0
        var description: String {
            switch self {
            case .equal: "equal"
            case .lower: "lower"
            case .zero: "zero"
            }
        }
    }

    /// Once the stored counter is above 0, an assertion whose counter is not above it — a cloned authenticator — is
    /// refused and audited `passkey.clone_suspected` with the passkey's ID only; the stored counter stays, so the real
    /// authenticator's next assertion signs in.
    @Test(arguments: StaleCounter.allCases)
    func aCounterThatDoesNotIncreaseIsRefusedAndAudited(stale: StaleCounter) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            authenticator.signCount = 4
            #expect(try await client.signInWithPasskey(&authenticator).status == .ok)  // stored: 5
            var clone = authenticator
            clone.countsSignatures = false
            clone.signCount = stale.rawValue
            let refused = try await client.signInWithPasskey(&clone)
            refused.expectInvalidPasskey()
            #expect(try await server.sessionCount(of: device.userID) == 2)

            let audit = try await server.services.audit.events(AuditQuery(action: "passkey.clone_suspected"))
            #expect(audit.count == 1, "\(audit)")
            #expect(audit.first?.target == "user \(device.userID)")
            #expect(audit.first?.details == "passkey \(passkey.passkeyID)", "\(audit)")
            // The real one counts on from 5.
            #expect(try await client.signInWithPasskey(&authenticator).status == .ok)
        }
    }

    /// Synced passkeys (iCloud Keychain) always send 0: 0 after 0 is no clone.
    @Test func aCounterThatStaysZeroIsAccepted() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            authenticator.countsSignatures = false
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            for _ in 0..<3 {
                let answer = try await client.signInWithPasskey(&authenticator)
                #expect(answer.status == .ok, "\(answer.text)")
            }
            #expect(try await server.services.audit.events(AuditQuery(action: "passkey.clone_suspected")).isEmpty)
            #expect(try await server.sessionCount(of: device.userID) == 4)
        }
    }

    /// Each assertion's counter is stored: the next must beat it, not the registration's.
    @Test func eachSignInStoresItsCounter() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            _ = try await client.deviceUserWithPasskey(&authenticator)
            for _ in 0..<3 { #expect(try await client.signInWithPasskey(&authenticator).status == .ok) }  // 1, 2, 3
            var replayed = authenticator
            replayed.signCount = 1  // above the registration's 0, below the last stored
            try await client.signInWithPasskey(&replayed).expectInvalidPasskey()
        }
    }

    /// Two sign-ins racing with assertions of the same counter: one wins, the other is refused.
    @Test func ofTwoAssertionsWithOneCounterOneSignsIn() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.live) { client in
            var authenticator = SoftwareAuthenticator()
            _ = try await client.deviceUserWithPasskey(&authenticator)
            authenticator.countsSignatures = false
            authenticator.signCount = 7
            let first = try await client.beginPasskeySignIn()
            let second = try await client.beginPasskeySignIn()
            let (one, other) = (authenticator.assert(first), authenticator.assert(second))
            async let a = client.finishPasskeySignIn(first.challengeID, one)
            async let b = client.finishPasskeySignIn(second.challengeID, other)
            let statuses = [try await a.status, try await b.status]
            #expect(statuses.sorted { $0.code < $1.code } == [.ok, .badRequest], "\(statuses)")
        }
    }

    // MARK: Unknown credentials

    @Test func anUnknownCredentialIs401() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var stranger = SoftwareAuthenticator()
            let refused = try await client.signInWithPasskey(&stranger)
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(refused.envelope?.error.code == .unknownCredential)
        }
    }

    /// A deleted user's passkey signs nobody in (and the user is not made again).
    @Test func aDeletedUsersPasskeyIs401() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            #expect(try await client.send(.delete, "/api/v1/users/me", bearer: device.accessToken).status == .ok)
            let refused = try await client.signInWithPasskey(&authenticator, deviceID: UUID().uuidString)
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(refused.envelope?.error.code == .unknownCredential)
            #expect(try await server.services.users.user(id: device.userID) == nil)
        }
    }

    /// Support deleting the user (the CLI, another process) has the same effect.
    @Test func aPasskeyOfAUserDeletedBySupportIs401() async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.live) { client in
            var authenticator = SoftwareAuthenticator()
            let (device, _) = try await client.deviceUserWithPasskey(&authenticator)
            #expect(try await server.cli("users", "delete", device.userID, "--yes").exitCode == 0)
            let refused = try await client.signInWithPasskey(&authenticator)
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(refused.envelope?.error.code == .unknownCredential)
        }
    }
}
