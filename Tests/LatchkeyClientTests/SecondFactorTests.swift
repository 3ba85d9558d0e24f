import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyClient

/// Issue 32, the SDK: a sign-in that needs a second factor, finishing it, stepping up, and managing TOTP factors, each
/// against a stubbed server.
@Suite struct SecondFactorTests {
    static let verifyPath = "/api/v1/mfa/verify"
    static let challenge = MFAChallenge(mfaToken: "mfa-token-1", factors: [.init(id: "factor-1", type: .totp)])

    /// The server's 403 `mfa_required` for ``challenge``.
    static let mfaRequired = TransportResponse.json(
        403,
        MFARequiredResponse(
            error: .init(code: .mfaRequired, message: "A second factor is required."), mfaToken: "mfa-token-1",
            factors: [.init(id: "factor-1", type: .totp)]))

    /// An unsigned JWT carrying `aal` and `amr`, as the server's access tokens do.
    static func accessToken(_ n: Int, aal: String, amr: [String]) -> String {
        let claims = #"{"sub":"user","sid":"session-1","n":\#(n),"aal":"\#(aal)","amr":[\#(amr.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        let payload = Data(claims.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "eyJhbGciOiJFUzI1NiJ9.\(payload).signature"
    }

    /// A token pair of the same session (`session-1`) whose access token is at `aal2` after a password and `second`.
    static func aal2Pair(_ n: Int, second: String = "otp") -> TokenPairResponse {
        var pair = Samples.pair(n)
        pair.accessToken = Self.accessToken(n, aal: "aal2", amr: ["pwd", second])
        return pair
    }

    // MARK: The sign-ins throw the challenge

    @Test func aPasswordSignInAnsweredMFARequiredThrowsTheChallengeAndKeepsTheSessionInUse() async throws {
        let fixture = Fixture { request in request.url.path == "/api/v1/auth/login" ? Self.mfaRequired : Samples.me(accepting: ["access-1"], request)
        }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()
        _ = await session.bootstrap()

        let error = await thrownError { try await session.signIn(email: "a@example.com", password: "correct horse") }

        #expect(error == .mfaRequired(Self.challenge))
        guard case .mfaRequired(let challenge) = error else { return }
        #expect(challenge.mfaToken == "mfa-token-1")
        #expect(challenge.factors == [MFAChallenge.Factor(id: "factor-1", type: .totp)])
        #expect(error?.code == .mfaRequired)
        #expect(try fixture.store.load() == stored)
        #expect(await session.state.isSignedIn)
    }

    @Test func signInWithAppleAndATokenExchangeThrowTheChallengeToo() async throws {
        let fixture = Fixture { _ in Self.mfaRequired }
        let session = fixture.session()
        #expect(
            await thrownError { try await session.signInWithApple(identityToken: "apple-token", rawNonce: "nonce") } == .mfaRequired(Self.challenge))
        #expect(await thrownError { try await session.exchangeExternalToken("clerk-token") } == .mfaRequired(Self.challenge))
    }

    @Test func aForbiddenMFARequiredWithoutAChallengeIsARefusal() {
        let error = LatchkeyError.from(.error(403, .mfaRequired, "No token."), now: Date())
        #expect(error == .refusal(403, .mfaRequired, "No token."))
    }

    // MARK: Finishing the sign-in

    @Test func completingWithACodeSendsExactlyTheTokenAndTheCodeAndSignsIn() async throws {
        let fixture = Fixture { _ in .json(200, Self.aal2Pair(2)) }
        let session = fixture.session()

        let signedIn = try await session.completeSignIn(Self.challenge, code: " 123456\n")

        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.verifyPath])
        #expect(sent.method == "POST")
        #expect(sent.header("Authorization") == nil)
        #expect(sent.header(DPoPProof.header) != nil)
        let body = try #require(sent.jsonObject())
        #expect(Set(body.keys) == ["mfa_token", "code"])
        #expect(body["mfa_token"] as? String == "mfa-token-1")
        #expect(body["code"] as? String == "123456")
        #expect(signedIn.aal == .aal2)
        #expect(signedIn.amr == [.password, .otp])
        #expect(await session.state == .signedIn(signedIn))
        let stored = try #require(try fixture.store.load()?.session)
        #expect(stored.accessToken == Self.aal2Pair(2).accessToken)
        #expect(stored.refreshToken == "refresh-2")
    }

    @Test func completingWithARecoveryCodeSendsTheRecoveryCode() async throws {
        let fixture = Fixture { _ in .json(200, Self.aal2Pair(2, second: "recovery")) }
        let session = fixture.session()

        let signedIn = try await session.completeSignIn(Self.challenge, recoveryCode: "ABCDE-FGHIJ")

        let body = try #require(fixture.transport.requests.first?.jsonObject())
        #expect(Set(body.keys) == ["mfa_token", "recovery_code"])
        #expect(body["recovery_code"] as? String == "ABCDE-FGHIJ")
        #expect(signedIn.amr == [.password, .recovery])
    }

    @Test func aDeadChallengeIsRefusedAndTheDeviceSessionInUseIsKept() async throws {
        let fixture = Fixture { request in
            request.url.path == Self.verifyPath ? .error(401, .invalidMFAToken, "Sign in again.") : Samples.me(accepting: ["access-1"], request)
        }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let session = fixture.session()
        _ = await session.bootstrap()

        let error = await thrownError { try await session.completeSignIn(Self.challenge, code: "123456") }

        #expect(error == .refusal(401, .invalidMFAToken, "Sign in again."))
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
        #expect(try fixture.store.load() == stored)
        #expect(await session.state.isSignedIn)
    }

    @Test func aWrongCodeIsInvalidCodeAndNoErrorTextHoldsTheCodeOrTheToken() async throws {
        let fixture = Fixture { _ in .error(400, .invalidCode, "Code 654321 for mfa-token-1 is wrong.") }
        let error = await thrownError { try await fixture.session().completeSignIn(Self.challenge, code: "654321") }
        #expect(error?.code == .invalidCode)
        #expect(error?.details?.status == 400)
        #expect(error?.details?.message.contains("654321") == false)
        #expect(error?.details?.message.contains("mfa-token-1") == false)
    }

    @Test func tooManyWrongCodesIsRateLimitedWithRetryAfter() async throws {
        let fixture = Fixture { _ in .error(429, .rateLimited, headers: ["Retry-After": "600"]) }
        let error = await thrownError { try await fixture.session().completeSignIn(Self.challenge, code: "123456") }
        #expect(error == .rateLimited(RateLimitInfo(retryAfter: 600)))
    }

    // MARK: Step-up

    @Test func aStepUpReplacesTheTokensOfTheSameSessionAsARefreshDoes() async throws {
        let fixture = Fixture { _ in .json(200, Self.aal2Pair(2)) }
        try fixture.storeSession()
        let session = fixture.session()
        let events = await EventRecorder(session)

        let steppedUp = try await session.stepUp(code: "123456")

        let sent = try #require(fixture.transport.requests.first)
        #expect(fixture.transport.requests.map(\.url.path) == [Self.verifyPath])
        #expect(sent.bearer == "access-1")
        #expect(Set(try #require(sent.jsonObject()).keys) == ["code"])
        #expect(steppedUp.aal == .aal2)
        let stored = try #require(try fixture.store.load()?.session)
        #expect(stored.sessionID == "session-1")
        #expect(stored.accessToken == Self.aal2Pair(2).accessToken)
        #expect(stored.refreshToken == "refresh-2")
        #expect(await session.state == .signedIn(steppedUp))
        #expect(await events.saw(.tokenRefreshed(steppedUp)))
    }

    @Test func aStepUpWithARecoveryCodeSendsTheRecoveryCode() async throws {
        let fixture = Fixture { _ in .json(200, Self.aal2Pair(2, second: "recovery")) }
        try fixture.storeSession()
        try await fixture.session().stepUp(recoveryCode: "abcde-fghij")
        #expect(Set(try #require(fixture.transport.requests.first?.jsonObject()).keys) == ["recovery_code"])
    }

    @Test func aStepUpWithoutASessionSendsNothing() async throws {
        let fixture = Fixture { _ in .json(200, Self.aal2Pair(2)) }
        #expect(await thrownError { try await fixture.session().stepUp(code: "123456") } == .notSignedIn)
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aSensitiveActionAtAAL1IsARefusalWithAAL2Required() async throws {
        let fixture = Fixture { _ in .error(403, .aal2Required, "Step up first.") }
        try fixture.storeSession()
        let session = fixture.session()
        #expect(await thrownError { try await session.regenerateRecoveryCodes() } == .refusal(403, .aal2Required, "Step up first."))
        #expect(await thrownError { try await session.removeFactor(id: "factor-1") }?.code == .aal2Required)
        #expect(fixture.transport.requests(to: "/api/v1/auth/refresh").isEmpty)
    }

    // MARK: What the session says

    @Test func aalAndAMRAreReadFromTheAccessToken() async throws {
        let fixture = Fixture()
        try fixture.storeSession(access: Self.accessToken(1, aal: "aal1", amr: ["device", "hwk"]))
        let signedIn = try #require(await fixture.session().bootstrap().signedInSession)
        #expect(signedIn.aal == .aal1)
        #expect(signedIn.amr == [.device, .hardwareKey])
    }

    @Test func aTokenThatDoesNotSayHasNoAALAndNoAMR() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let signedIn = try #require(await fixture.session().bootstrap().signedInSession)
        #expect(signedIn.aal == nil)
        #expect(signedIn.amr.isEmpty)
    }

    // MARK: Enrolling and managing factors

    @Test func enrollingReturnsTheFactorSecretAndURI() async throws {
        let uri = "otpauth://totp/Latchkey:a@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Latchkey"
        let fixture = Fixture { _ in .json(201, TOTPEnrollmentResponse(factorID: "factor-1", secret: "JBSWY3DPEHPK3PXP", otpauthURI: uri)) }
        try fixture.storeSession()

        let enrollment = try await fixture.session().enrollTOTP()

        #expect(enrollment == TOTPEnrollment(factorID: "factor-1", secret: "JBSWY3DPEHPK3PXP", otpauthURI: URL(string: uri)!))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.path == "/api/v1/mfa/totp")
        #expect(sent.bearer == "access-1")
        #expect(sent.header(DPoPProof.header) != nil)
    }

    @Test func confirmingReturnsTheRecoveryCodesAndRefreshesToAAL2() async throws {
        let codes = (1...10).map { "CODE\($0)-XXXXX" }
        let fixture = Fixture { request in
            switch request.url.path {
            case "/api/v1/mfa/totp/factor-1/confirm": .json(200, RecoveryCodesResponse(recoveryCodes: codes))
            case "/api/v1/auth/refresh": .json(200, Self.aal2Pair(2))
            default: .error(404, .notFound)
            }
        }
        try fixture.storeSession()
        let session = fixture.session()

        #expect(try await session.confirmTOTP(factorID: "factor-1", code: "123456") == codes)

        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/mfa/totp/factor-1/confirm", "/api/v1/auth/refresh"])
        let body = try #require(fixture.transport.requests.first?.jsonObject())
        #expect(Set(body.keys) == ["code"])
        let signedIn = try #require(await session.state.signedInSession)
        #expect(signedIn.aal == .aal2)
    }

    @Test func confirmingReturnsTheCodesEvenWhenTheRefreshAfterFails() async throws {
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/refresh" { throw URLError(.notConnectedToInternet) }
            return .json(200, RecoveryCodesResponse(recoveryCodes: ["AAAAA-BBBBB"]))
        }
        try fixture.storeSession()
        #expect(try await fixture.session().confirmTOTP(factorID: "factor-1", code: "123456") == ["AAAAA-BBBBB"])
    }

    @Test func theFactorsAreListedAndOneIsRemovedByItsID() async throws {
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        let factor = MFAFactorsResponse.Factor(id: "factor-1", type: .totp, confirmed: true, createdAt: created)
        let fixture = Fixture { request in
            request.method == "GET" ? .json(200, MFAFactorsResponse(factors: [factor])) : TransportResponse(status: 204)
        }
        try fixture.storeSession()
        let session = fixture.session()

        #expect(try await session.mfaFactors() == [factor])
        try await session.removeFactor(id: "factor-1")

        #expect(
            fixture.transport.requests.map { "\($0.method) \($0.url.path)" } == ["GET /api/v1/mfa/factors", "DELETE /api/v1/mfa/factors/factor-1"])
    }

    @Test func aFactorIDThatIsNotOnePathSegmentIsNotSent() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        let session = fixture.session()
        let error = await thrownError { try await session.removeFactor(id: "../users/me") }
        #expect(error == .invalidRequest("../users/me is not a factor ID"))
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func newRecoveryCodesAreReturned() async throws {
        let fixture = Fixture { _ in .json(200, RecoveryCodesResponse(recoveryCodes: ["AAAAA-BBBBB", "CCCCC-DDDDD"])) }
        try fixture.storeSession()
        #expect(try await fixture.session().regenerateRecoveryCodes() == ["AAAAA-BBBBB", "CCCCC-DDDDD"])
        #expect(fixture.transport.requests.map(\.url.path) == ["/api/v1/mfa/recovery-codes"])
    }

    // MARK: Nothing secret prints

    @Test func aChallengeAndAnEnrollmentNeverPrintTheirSecrets() {
        let enrollment = TOTPEnrollment(
            factorID: "factor-1", secret: "JBSWY3DPEHPK3PXP",
            otpauthURI: URL(string: "otpauth://totp/Latchkey:a?secret=JBSWY3DPEHPK3PXP&issuer=Latchkey")!)
        let values: [(Any, [String])] = [
            (Self.challenge, ["mfa-token-1"]), (LatchkeyError.mfaRequired(Self.challenge), ["mfa-token-1"]),
            (enrollment, ["JBSWY3DPEHPK3PXP", "otpauth"]),
        ]
        for (value, secrets) in values {
            var dumped = ""
            dump(value, to: &dumped)
            for text in [String(describing: value), String(reflecting: value), "\(value)", dumped] {
                for secret in secrets { #expect(!text.contains(secret), "printed \(secret): \(text)") }
            }
        }
        #expect(String(describing: Self.challenge).contains("factor-1"))
        #expect(String(describing: enrollment).contains("factor-1"))
    }

    @Test func theMFARequiredErrorReadsAsASentence() {
        #expect(
            LatchkeyError.mfaRequired(Self.challenge).description
                == "Enter the code from your authenticator app, or a recovery code, to finish signing in.")
        #expect(
            LatchkeyError.refusal(401, .invalidMFAToken, "x").description
                == "This sign-in has expired or had too many wrong codes. Please sign in again.")
    }
}

extension AuthState {
    /// The session when signed in.
    var signedInSession: AuthSession? { if case .signedIn(let session) = self { session } else { nil } }
}
