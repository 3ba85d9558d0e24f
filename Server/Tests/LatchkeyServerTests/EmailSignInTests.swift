import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyTestSupport
import NIOCore
import Testing

// `@testable`: the hashing pool's count of verifications.
@testable import LatchkeyServer

/// Signing in with email and password, and mailing a new verification code: answers that never tell whether an
/// address has an account, and limits per account and per address.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct EmailSignInTests {
    static let password = "correct horse battery staple"

    @Test func anUnknownAddressAndAWrongPasswordGetTheSameAnswer() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            let unknown = try await client.login(newAddress(), Self.password)
            let wrong = try await client.login(email, "not the password at all")
            #expect(unknown.status == .unauthorized && wrong.status == .unauthorized)
            #expect(unknown.envelope?.error.code == .invalidCredentials)
            #expect(unknown.text == wrong.text)
        }
    }

    /// The time of a refusal does not tell either: an unknown address costs a password verification (against a dummy
    /// hash) exactly as a wrong password does, which the pool's count shows for every attempt. The medians of interleaved
    /// rounds (hashes costly enough to dominate a request, 1 MiB, as the real 19 MiB do; the failure limits raised out of
    /// the way) are a gross check beside it: on two shared cores they differ by up to about 12 % at times, so the bound is
    /// 50 %, which an unknown address answered without a hash (several times faster) would break.
    @Test func anUnknownAddressAndAWrongPasswordTakeTheSameTime() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.email.argon2Memory = 1024
            configuration.accountLimits.loginFailures.limit = 1000
            configuration.accountLimits.passwordLogin.limit = 1000
        }
        try await server.test(.live) { client in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            // Warm both paths (the dummy hash is made on the first unknown address).
            _ = try await client.login(newAddress(), Self.password)
            _ = try await client.login(email, "not the password at all")

            let clock = ContinuousClock()
            var unknown: [Duration] = []
            var wrong: [Duration] = []
            for round in 0..<31 {
                let unknownAddress = newAddress()
                let pool = server.services.accounts.pool
                func timeUnknown() async throws {
                    let (before, start) = (pool.verifications, clock.now)
                    #expect(try await client.login(unknownAddress, Self.password).status == .unauthorized)
                    unknown.append(clock.now - start)
                    #expect(pool.verifications == before + 1, "an unknown address is one verification")
                }
                func timeWrong() async throws {
                    let (before, start) = (pool.verifications, clock.now)
                    #expect(try await client.login(email, "not the password at all").status == .unauthorized)
                    wrong.append(clock.now - start)
                    #expect(pool.verifications == before + 1, "a wrong password is one verification")
                }
                if round.isMultiple(of: 2) {
                    try await timeUnknown()
                    try await timeWrong()
                } else {
                    try await timeWrong()
                    try await timeUnknown()
                }
            }
            let medians = (unknown: unknown.sorted()[unknown.count / 2], wrong: wrong.sorted()[wrong.count / 2])
            let gap = abs(medians.unknown / medians.wrong - 1)
            #expect(gap < 0.5, "median of an unknown address \(medians.unknown), of a wrong password \(medians.wrong)")
        }
    }

    @Test func tenFailuresHoldTheAccountBackForFifteenMinutesAndNoOtherAccount() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let other = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            _ = try await client.verifiedAccount(other, Self.password, peer: peer)
            for _ in 1...10 { #expect(try await client.login(email, "not the password at all").status == .unauthorized) }

            let held = try await client.login(email, Self.password)
            #expect(held.status == .tooManyRequests)
            #expect(held.envelope?.error.code == .tooManyAttempts)
            let retryAfter = try #require(held.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...900).contains(retryAfter))
            #expect(try await client.login(other, Self.password).status == .ok)

            server.clock.advance(by: 15 * 60)
            #expect(try await client.login(email, Self.password).status == .ok)
        }
    }

    /// The failure is counted before the hash is checked: of 40 wrong passwords at once, at most the limit's 10 are
    /// checked (401), and the rest are held back (429) without a hash; the right password is held back as well.
    @Test func fortyConcurrentWrongPasswordsGetAtMostTenTries() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer)
            let answers = try await racing(40, port: try #require(client.port)) { attempt in
                let body = try! JSONEncoder().encode(PasswordLoginRequest(email: email, password: "not the password, guess \(attempt)"))
                return .init("/api/v1/auth/login", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: body))
            }
            let checked = answers.filter { $0.status == .unauthorized }.count
            #expect(checked <= 10 && checked > 0, "\(checked) wrong passwords were checked")
            #expect(answers.filter { $0 == RacedAnswer(status: .tooManyRequests, code: .tooManyAttempts) }.count == 40 - checked)
            #expect(try await client.login(email, Self.password).status == .tooManyRequests)
        }
    }

    @Test func resendingAnswersTheSameWhateverTheAddress() async throws {
        try await withMailServer { client, server, peer in
            let unverified = newAddress()
            let verified = newAddress()
            _ = try await client.register(unverified, Self.password)
            _ = try await client.verifiedAccount(verified, Self.password, peer: peer)
            var bodies: [String] = []
            for email in [unverified, newAddress(), verified] {
                let response = try await client.send(.post, "/api/v1/auth/resend-verification", body: EmailAddressRequest(email: email))
                #expect(response.status == .accepted)
                bodies.append(response.text)
            }
            #expect(Set(bodies).count == 1)
        }
    }

    /// The mail limits are taken before the mail is queued: of 20 resends at once for one address, one is mailed each
    /// minute, and those held back by the minute's limit do not count against the hour's (five mails, the registration's
    /// among them, then none).
    @Test func concurrentResendsQueueOneMailAMinuteAndFiveAnHour() async throws {
        let peer = try await SMTPPeer.shared()
        let server = try await TestServer.make { configuration in
            configuration.useMailPeer(peer)
            configuration.accountLimits.email.limit = 1000  // the per-client limit out of the way of 100 resends
        }
        try await server.test(.live) { client in
            let email = newAddress()
            #expect(try await client.register(email, Self.password).status == .created)
            for minute in 1...4 {
                server.clock.advance(by: 61)
                let queued = try await racingMailRequests(20, to: "/api/v1/auth/resend-verification", for: email, client: client, server: server)
                #expect(queued == 1 + minute, "after the resends of minute \(minute)")
            }
            server.clock.advance(by: 61)
            #expect(try await racingMailRequests(20, to: "/api/v1/auth/resend-verification", for: email, client: client, server: server) == 5)
        }
    }

    @Test func aNewCodeGoesAtMostOnceAMinuteAndReplacesTheOldOne() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            _ = try await client.register(email, Self.password)
            let first = try await peer.mail(to: email)
            let resend = EmailAddressRequest(email: email)
            // The registration's mail counts: this one is held back.
            #expect(try await client.send(.post, "/api/v1/auth/resend-verification", body: resend).status == .accepted)
            #expect(try await server.services.store.outbox(limit: 10, pendingOnly: false).filter { $0.recipient == email }.count == 1)

            server.clock.advance(by: 61)
            #expect(try await client.send(.post, "/api/v1/auth/resend-verification", body: resend).status == .accepted)
            let second = try #require(try await peer.mails(to: email, count: 2).last)
            #expect(second.code != first.code || second.token != first.token)
            #expect(try await client.verify(email, code: first.code).envelope?.error.code == .invalidCode)
            #expect(try await client.verify(email, code: second.code).status == .ok)
        }
    }
}
