import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The second-factor routes of issue 32, as a client calls them.
extension TestClientProtocol {
    /// `POST /api/v1/mfa/totp`.
    func enrollTOTP(bearer: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/totp", bearer: bearer, json: "{}")
    }

    /// `POST /api/v1/mfa/totp/{factor_id}/confirm`.
    func confirmTOTP(_ factorID: String, code: String, bearer: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/totp/\(factorID)/confirm", bearer: bearer, body: MFACodeRequest(code: code))
    }

    /// `POST /api/v1/mfa/verify` finishing a sign-in with a TOTP code.
    func verifyMFA(_ mfaToken: String, code: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/verify", body: MFAVerifyRequest(mfaToken: mfaToken, code: code))
    }

    /// `POST /api/v1/mfa/verify` finishing a sign-in with a recovery code.
    func verifyMFA(_ mfaToken: String, recoveryCode: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/verify", body: MFAVerifyRequest(mfaToken: mfaToken, recoveryCode: recoveryCode))
    }

    /// `POST /api/v1/mfa/verify {code}` with a session's Bearer: a step-up.
    func stepUp(code: String, bearer: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/verify", bearer: bearer, body: MFAVerifyRequest(code: code))
    }

    /// `GET /api/v1/mfa/factors`.
    func factors(bearer: String) async throws -> TestResponse {
        try await self.send(.get, "/api/v1/mfa/factors", bearer: bearer)
    }

    /// `POST /api/v1/mfa/recovery-codes`.
    func regenerateRecoveryCodes(bearer: String) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/mfa/recovery-codes", bearer: bearer, json: "{}")
    }

    /// `DELETE /api/v1/mfa/factors/{id}`.
    func removeFactor(_ factorID: String, bearer: String) async throws -> TestResponse {
        try await self.send(.delete, "/api/v1/mfa/factors/\(factorID)", bearer: bearer)
    }

    /// A password login that must be held for the second factor: its `mfa_token`.
    func mfaChallenge(_ email: String, _ password: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let response = try await self.login(email, password)
        guard response.status == .forbidden, let challenge = try? response.decode(MFARequiredResponse.self) else {
            throw TestFailure("login answered \(response.status) without an mfa_token: \(response.text)")
        }
        return challenge.mfaToken
    }

    /// Enrols and confirms a TOTP factor for the session `bearer` at `now`: the factor, its generator and the recovery codes.
    func confirmedFactor(bearer: String, at now: Date) async throws -> ConfirmedFactor {
        let enrolled = try await self.enrollTOTP(bearer: bearer)
        guard enrolled.status == .created else { throw TestFailure("enrolment answered \(enrolled.status): \(enrolled.text)") }
        let enrolment = try enrolled.decode(TOTPEnrollmentResponse.self)
        let totp = try TOTPGenerator(secret: enrolment.secret)
        let confirmed = try await self.confirmTOTP(enrolment.factorID, code: totp.code(at: now), bearer: bearer)
        guard confirmed.status == .ok else { throw TestFailure("confirm answered \(confirmed.status): \(confirmed.text)") }
        return ConfirmedFactor(
            factorID: enrolment.factorID, secret: enrolment.secret, totp: totp,
            recoveryCodes: try confirmed.decode(RecoveryCodesResponse.self).recoveryCodes)
    }

    /// A verified email account signed in twice (both sessions `aal1`), then given a confirmed TOTP factor by the first
    /// session; the clock is then moved one step on, so the code of "now" is a fresh one.
    func accountWithSecondFactor(peer: SMTPPeer, server: TestServer, email: String = newAddress()) async throws -> SecondFactorAccount {
        let password = SecondFactorAccount.password
        let first = try await self.verifiedAccount(email, password, peer: peer)
        let second = try await self.login(email, password).decode(TokenPairResponse.self)
        let factor = try await self.confirmedFactor(bearer: first.accessToken, at: server.clock.now())
        server.clock.advance(by: TOTPGenerator.period)
        return SecondFactorAccount(email: email, userID: first.userID, confirmingSession: first, otherSession: second, factor: factor)
    }
}

/// A confirmed TOTP factor as its owner knows it.
struct ConfirmedFactor: Sendable {
    let factorID: String
    let secret: String
    let totp: TOTPGenerator
    let recoveryCodes: [String]
}

/// An email account with a confirmed factor: the session that confirmed it (now `aal2` at its next refresh) and a
/// session begun before it (still `aal1`).
struct SecondFactorAccount: Sendable {
    static let password = "correct horse battery staple"

    let email: String
    let userID: String
    let confirmingSession: TokenPairResponse
    let otherSession: TokenPairResponse
    let factor: ConfirmedFactor
    var password: String { Self.password }
}

extension TestResponse {
    /// The body as a JSON object (nil when it is not one).
    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(self.body.readableBytesView))) as? [String: Any]
    }
}

/// The claims of an access token, read without checking anything.
func claims(of accessToken: String) throws -> AccessTokenClaims { try Forge.claims(of: accessToken) }

/// A recovery code as the server shows it: `XXXXX-XXXXX`, RFC 4648 base32 upper case.
func isRecoveryCodeShaped(_ code: String) -> Bool {
    let halves = code.split(separator: "-", omittingEmptySubsequences: false)
    return halves.count == 2 && halves.allSatisfy { $0.count == 5 && Base32.isBase32($0) }
}

extension SMTPPeer {
    /// The plain-text parts of every mail to `recipient` once one of them satisfies `condition`, waiting (in real time,
    /// up to 20 s) for it to be delivered; whatever came when the time is up.
    func texts(to recipient: String, until condition: (String) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let texts = try await self.messages(to: recipient, wait: .seconds(5)).map { message in
                RenderedMessage(message.raw).parts().first { $0.headers["content-type"]?.hasPrefix("text/plain") == true }?.decodedBody ?? ""
            }
            if texts.contains(where: condition) || ContinuousClock.now > deadline { return texts }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

extension TestServer {
    /// A test server whose configuration is read from the dotted string settings `keys` (as `latchkey serve` reads them), then
    /// given the test servers' own database, issuer, master key, port, limits and clock as ``make(clock:directory:backend:database:logger:configure:)``
    /// sets them, then `configure`: for settings a test names by key rather than by property.
    static func make(
        keys: [String: String], clock: ManualClock = ManualClock(), configure: (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let keyed = try await LatchkeyConfiguration.load(overrides: keys.mapValues { .string($0) }, configFile: nil, environment: [:])
        return try await TestServer.make(clock: clock) { configuration in
            var result = keyed.runningAs(configuration)
            configure(&result)
            configuration = result
        }
    }
}

extension LatchkeyConfiguration {
    /// This configuration (settings a test read by their keys) with what the test harness chose for `harness`: the
    /// database, the public URL, the master key, the port, the (open) limits, the metrics token and the quick intervals.
    func runningAs(_ harness: LatchkeyConfiguration) -> LatchkeyConfiguration {
        var result = self
        result.database = harness.database
        result.databaseMaxConnections = harness.databaseMaxConnections
        result.databaseTimeout = harness.databaseTimeout
        result.publicURL = harness.publicURL
        result.masterKey = harness.masterKey
        result.port = harness.port
        result.limits = harness.limits
        result.metricsToken = harness.metricsToken
        result.pruneInterval = harness.pruneInterval
        result.email.pollInterval = harness.email.pollInterval
        return result
    }
}
