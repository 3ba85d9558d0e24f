import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import SQLKit
import Testing

/// The tests' own authenticator against RFC 6238's published SHA-1 vectors (Appendix B, the last six of the eight
/// digits): every second-factor test below leans on it.
@Suite struct SecondFactorAuthenticatorTests {
    @Test(
        arguments: [
            (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"), (2_000_000_000, "279037"),
            (20_000_000_000, "353130"),
        ] as [(TimeInterval, String)])
    func theTestsAuthenticatorGivesRFC6238sCodes(time: TimeInterval, code: String) throws {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"  // base32 of the ASCII "12345678901234567890"
        #expect(Base32.decode(secret) == Array("12345678901234567890".utf8))
        #expect(try TOTPGenerator(secret: secret).code(at: Date(timeIntervalSince1970: time)) == code)
    }
}

/// Enrolling and confirming a TOTP factor (issue 32), the sign-in it then holds back, and finishing that sign-in:
/// over a live socket, mailing through the SMTP peer, codes made by ``TOTPGenerator`` on the server's manual clock.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorTests {
    static let password = SecondFactorAccount.password

    // MARK: Enrolment

    @Test func enrollingAnswers201WithABase32SecretAndAURINamingTheIssuerAndTheAddress() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            let enrolled = try await client.enrollTOTP(bearer: session.accessToken)
            #expect(enrolled.status == .created, "\(enrolled.text)")
            #expect(Set(enrolled.jsonObject?.keys.map { $0 } ?? []) == ["factor_id", "secret", "otpauth_uri"], "\(enrolled.text)")
            let enrolment = try enrolled.decode(TOTPEnrollmentResponse.self)
            #expect(UUID(uuidString: enrolment.factorID) != nil)
            // Base32 without padding, of a key of at least 160 bits (RFC 4226 §4, R6).
            #expect(Base32.isBase32(enrolment.secret), "\(enrolment.secret.count) characters")
            #expect((Base32.decode(enrolment.secret)?.count ?? 0) >= 20)
            let uri = try #require(URLComponents(string: enrolment.otpauthURI))
            #expect(uri.scheme == "otpauth" && uri.host == "totp")
            #expect(uri.path == "/Latchkey:\(email)", "\(enrolment.otpauthURI)")
            #expect(uri.queryItems?.first { $0.name == "secret" }?.value == enrolment.secret)
            #expect(uri.queryItems?.first { $0.name == "issuer" }?.value == "Latchkey")
        }
    }

    /// The issuer is `email.app-name` when `mfa.issuer` is not set; a user without an address is named by their ID.
    @Test func theURINamesTheAppNameAndAUserWithoutAnAddressByID() async throws {
        let server = try await TestServer.make { $0.email.appName = "Acme Notes" }
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let enrolment = try await client.enrollTOTP(bearer: device.accessToken).decode(TOTPEnrollmentResponse.self)
            let uri = try #require(URLComponents(string: enrolment.otpauthURI))
            #expect(uri.path == "/Acme Notes:\(device.userID)", "\(enrolment.otpauthURI)")
            #expect(uri.queryItems?.first { $0.name == "issuer" }?.value == "Acme Notes")
        }
    }

    @Test func mfaIssuerNamesTheIssuerBeforeTheAppName() async throws {
        let server = try await TestServer.make(keys: ["mfa.issuer": "Acme Auth", "email.app-name": "Acme Notes"])
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let enrolment = try await client.enrollTOTP(bearer: device.accessToken).decode(TOTPEnrollmentResponse.self)
            let uri = try #require(URLComponents(string: enrolment.otpauthURI))
            #expect(uri.path == "/Acme Auth:\(device.userID)", "\(enrolment.otpauthURI)")
            #expect(uri.queryItems?.first { $0.name == "issuer" }?.value == "Acme Auth")
        }
    }

    /// The secret is stored only sealed with the master key: neither the key an app is given nor its text is in the row.
    @Test func theSecretIsSealedAtRest() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            let enrolment = try await client.enrollTOTP(bearer: device.accessToken).decode(TOTPEnrollmentResponse.self)
            let stored = try await server.services.database.read { sql in
                try await sql.raw("SELECT sealed_secret FROM mfa_factors WHERE id = \(bind: enrolment.factorID)").first()?
                    .decode(column: "sealed_secret", as: String.self)
            }
            let sealed = try #require(stored)
            let key = String(decoding: try TOTPGenerator(secret: enrolment.secret).key, as: UTF8.self)
            #expect(!sealed.contains(enrolment.secret) && !sealed.contains(key))
            #expect(Data(base64Encoded: sealed).map { !String(decoding: $0, as: UTF8.self).contains(key) } == true)
        }
    }

    @Test func enrollingNeedsARecentSignIn() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            server.clock.advance(by: 601)  // tokens.recent-authentication (600) has passed
            let refreshed = try await client.refresh(session.refreshToken).decode(TokenPairResponse.self)
            let stale = try await client.enrollTOTP(bearer: refreshed.accessToken)
            #expect(stale.status == .forbidden, "\(stale.text)")
            #expect(stale.envelope?.error.code == .reauthenticationRequired)
            let fresh = try await client.login(email, Self.password).decode(TokenPairResponse.self)
            #expect(try await client.enrollTOTP(bearer: fresh.accessToken).status == .created)
        }
    }

    @Test func anUnconfirmedFactorChangesNothing() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            #expect(try await client.enrollTOTP(bearer: session.accessToken).status == .created)
            let login = try await client.login(email, Self.password)
            #expect(login.status == .ok, "\(login.text)")
            #expect(try claims(of: try login.decode(TokenPairResponse.self).accessToken).aal == .aal1)
        }
    }

    @Test func aWrongCodeConfirmsNothing() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            let enrolment = try await client.enrollTOTP(bearer: session.accessToken).decode(TOTPEnrollmentResponse.self)
            let totp = try TOTPGenerator(secret: enrolment.secret)
            let wrong = try await client.confirmTOTP(enrolment.factorID, code: totp.wrongCode(at: server.clock.now()), bearer: session.accessToken)
            #expect(wrong.status == .badRequest, "\(wrong.text)")
            #expect(wrong.envelope?.error.code == .invalidCode)
            #expect(try await client.login(email, Self.password).status == .ok)
            let right = try await client.confirmTOTP(enrolment.factorID, code: totp.code(at: server.clock.now()), bearer: session.accessToken)
            #expect(right.status == .ok, "\(right.text)")
            #expect(try await client.login(email, Self.password).status == .forbidden)
        }
    }

    /// Confirming answers the recovery codes and nothing else: no token; the session that confirmed becomes `aal2` at its
    /// next refresh, naming the TOTP code among its methods; a session begun before stays `aal1`.
    @Test func confirmingShowsTenRecoveryCodesAndTheConfirmingSessionsNextRefreshIsAAL2() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, Self.password, peer: peer)
            let before = try claims(of: session.accessToken)
            #expect(before.aal == .aal1 && before.amr == [.password], "\(before)")
            let other = try await client.login(email, Self.password).decode(TokenPairResponse.self)

            let enrolment = try await client.enrollTOTP(bearer: session.accessToken).decode(TOTPEnrollmentResponse.self)
            let code = try TOTPGenerator(secret: enrolment.secret).code(at: server.clock.now())
            let confirmed = try await client.confirmTOTP(enrolment.factorID, code: code, bearer: session.accessToken)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            #expect(Set(confirmed.jsonObject?.keys.map { $0 } ?? []) == ["recovery_codes"], "\(confirmed.text)")
            let codes = try confirmed.decode(RecoveryCodesResponse.self).recoveryCodes
            #expect(codes.count == 10 && Set(codes).count == 10)
            for code in codes { #expect(isRecoveryCodeShaped(code), "\(code)") }

            let refreshed = try await client.refresh(session.refreshToken).decode(TokenPairResponse.self)
            let after = try claims(of: refreshed.accessToken)
            #expect(after.aal == .aal2, "\(after)")
            #expect(after.amr?.contains(.otp) == true && after.amr?.contains(.password) == true, "\(after)")
            let untouched = try claims(of: try await client.refresh(other.refreshToken).decode(TokenPairResponse.self).accessToken)
            #expect(untouched.aal == .aal1 && untouched.amr == [.password], "\(untouched)")
        }
    }

    // MARK: Signing in with a second factor

    @Test func aPasswordLoginOfAUserWithAFactorIs403MFARequiredWithoutTokens() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let held = try await client.login(account.email, account.password)
            #expect(held.status == .forbidden, "\(held.text)")
            let body = try #require(held.jsonObject, "\(held.text)")
            #expect(Set(body.keys) == ["error", "mfa_token", "factors"], "\(held.text)")
            let error = try #require(body["error"] as? [String: Any])
            #expect(Set(error.keys) == ["code", "message"], "\(held.text)")
            #expect(error["code"] as? String == "mfa_required")
            #expect((error["message"] as? String)?.isEmpty == false)
            #expect((body["mfa_token"] as? String)?.isEmpty == false)
            let factors = try #require(body["factors"] as? [[String: Any]])
            #expect(factors.count == 1 && Set(factors[0].keys) == ["id", "type"], "\(held.text)")
            #expect(factors[0]["id"] as? String == account.factor.factorID)
            #expect(factors[0]["type"] as? String == "totp")
            #expect(!held.text.contains(account.factor.secret))
        }
    }

    @Test func verifyingTheMFATokenWithACodeGivesAnAAL2SessionNamingBothFactors() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let mfaToken = try await client.mfaChallenge(account.email, account.password)
            let verified = try await client.verifyMFA(mfaToken, code: account.factor.totp.code(at: server.clock.now()))
            #expect(verified.status == .ok, "\(verified.text)")
            let pair = try verified.decode(TokenPairResponse.self)
            #expect(pair.userID == account.userID)
            let signedIn = try claims(of: pair.accessToken)
            #expect(signedIn.aal == .aal2 && signedIn.amr == [.password, .otp], "\(signedIn)")
            #expect(try await client.me(pair.accessToken).status == .ok)
            // The session stays aal2 when it refreshes.
            let refreshed = try claims(of: try await client.refresh(pair.refreshToken).decode(TokenPairResponse.self).accessToken)
            #expect(refreshed.aal == .aal2 && refreshed.amr == [.password, .otp], "\(refreshed)")
        }
    }

    /// Continuing a device's own session is no new sign-in: a device user with an address and a factor refreshes and
    /// registers again with its secret, while a password login of the same user is held back.
    @Test func refreshAndRegisteringTheDeviceAgainWithItsSecretAreNotHeldBack() async throws {
        try await withMailServer { client, server, peer in
            let device = try await client.registerDevice()
            let email = newAddress()
            _ = try await client.verifiedAccount(email, Self.password, peer: peer, bearer: device.accessToken)
            _ = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())

            let refreshed = try await client.refresh(device.refreshToken)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            #expect(again.status == .ok, "\(again.text)")
            #expect(try again.decode(TokenPairResponse.self).userID == device.userID)
            #expect(try await client.login(email, Self.password).status == .forbidden)
        }
    }

    @Test func aDeviceSessionNamesTheDeviceAndABoundKey() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let plain = try claims(of: try await client.registerDevice().accessToken)
            #expect(plain.aal == .aal1 && plain.amr == [.device], "\(plain)")
            let bound = try await client.registerDevice(key: DPoPKey(), at: server.clock.now())
            #expect(bound.status == .created, "\(bound.text)")
            let boundClaims = try claims(of: try bound.decode(TokenPairResponse.self).accessToken)
            #expect(boundClaims.aal == .aal1 && boundClaims.amr == [.device, .hardwareKey], "\(boundClaims)")
        }
    }

    /// An access code is support's own door: exchanged for a user with a factor it is not held back, starts at `aal1`
    /// and is audited.
    @Test func anAccessCodeExchangeIsNotHeldBackStartsAtAAL1AndIsAudited() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let (code, _) = try await server.services.accessCodes.issue(userID: account.userID, expiresIn: nil, note: "ticket 32")
            let exchanged = try await client.send(.post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: code))
            #expect(exchanged.status == .ok, "\(exchanged.text)")
            let session = try claims(of: try exchanged.decode(TokenPairResponse.self).accessToken)
            #expect(session.aal == .aal1 && session.amr == [.accessCode], "\(session)")
            // The code was issued in process (not audited): any access-code row is the exchange's.
            let audit = try await AuditCLITests.cli(server, "audit", "list")
            #expect(audit.exitCode == 0, "\(audit)")
            #expect(audit.tableRows.contains { $0[2].contains("access_code") }, "no exchange is audited: \(audit.stdout)")
        }
    }

    // MARK: Listing factors

    @Test func theFactorsListShowsEachFactorWithoutItsSecret() async throws {
        try await withMailServer { client, server, peer in
            let session = try await client.verifiedAccount(newAddress(), Self.password, peer: peer)
            #expect(try await client.factors(bearer: session.accessToken).decode(MFAFactorsResponse.self).factors.isEmpty)
            let enrolled = try await client.enrollTOTP(bearer: session.accessToken)
            let enrolment = try enrolled.decode(TOTPEnrollmentResponse.self)

            let listed = try await client.factors(bearer: session.accessToken)
            #expect(listed.status == .ok, "\(listed.text)")
            #expect(!listed.text.contains(enrolment.secret))
            let rows = try #require(listed.jsonObject?["factors"] as? [[String: Any]], "\(listed.text)")
            #expect(rows.count == 1 && Set(rows[0].keys) == ["id", "type", "confirmed", "created_at"], "\(listed.text)")
            let factor = try #require(try listed.decode(MFAFactorsResponse.self).factors.first)
            #expect(factor.id == enrolment.factorID && factor.type == .totp && !factor.confirmed)
            #expect(abs(factor.createdAt.timeIntervalSince(server.clock.now())) < 1, "\(factor.createdAt)")

            let code = try TOTPGenerator(secret: enrolment.secret).code(at: server.clock.now())
            #expect(try await client.confirmTOTP(enrolment.factorID, code: code, bearer: session.accessToken).status == .ok)
            let confirmed = try await client.factors(bearer: session.accessToken)
            #expect(try confirmed.decode(MFAFactorsResponse.self).factors.map(\.confirmed) == [true])
            #expect(!confirmed.text.contains(enrolment.secret))
        }
    }

    @Test func aSecondEnrolmentReplacesAnUnconfirmedOne() async throws {
        try await withMailServer { client, server, peer in
            let session = try await client.verifiedAccount(newAddress(), Self.password, peer: peer)
            let first = try await client.enrollTOTP(bearer: session.accessToken).decode(TOTPEnrollmentResponse.self)
            let second = try await client.enrollTOTP(bearer: session.accessToken)
            #expect(second.status == .created, "\(second.text)")
            let replacement = try second.decode(TOTPEnrollmentResponse.self)
            #expect(replacement.factorID != first.factorID && replacement.secret != first.secret)
            #expect(try await client.factors(bearer: session.accessToken).decode(MFAFactorsResponse.self).factors.map(\.id) == [replacement.factorID])

            let now = server.clock.now()
            let stale = try await client.confirmTOTP(
                first.factorID, code: try TOTPGenerator(secret: first.secret).code(at: now), bearer: session.accessToken)
            #expect((400..<500).contains(stale.status.code), "\(stale.status) \(stale.text)")
            #expect(stale.envelope != nil, "\(stale.text)")
            let confirmed = try await client.confirmTOTP(
                replacement.factorID, code: try TOTPGenerator(secret: replacement.secret).code(at: now), bearer: session.accessToken)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
        }
    }

    @Test func enrollingWhileAConfirmedFactorExistsIs409FactorExists() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let aal2 = try await client.refresh(account.confirmingSession.refreshToken).decode(TokenPairResponse.self)
            #expect(try claims(of: aal2.accessToken).aal == .aal2)
            let again = try await client.enrollTOTP(bearer: aal2.accessToken)
            #expect(again.status == .conflict, "\(again.text)")
            #expect(again.envelope?.error.code == .factorExists)
            let factors = try await client.factors(bearer: aal2.accessToken).decode(MFAFactorsResponse.self).factors
            #expect(factors.map(\.id) == [account.factor.factorID] && factors.map(\.confirmed) == [true])
        }
    }
}
