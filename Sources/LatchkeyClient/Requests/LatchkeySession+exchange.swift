import Foundation
import LatchkeyAPI

/// What an exchange looks at in an answer before handing it back: the status, the headers, and the error code of a body
/// already read.
protocol HTTPAnswer: Sendable {
    var status: Int { get }
    func header(_ name: String) -> String?
    /// The error envelope's code, when the body has been read and is one.
    var errorCode: ErrorCode? { get }
}

extension TransportResponse: HTTPAnswer {
    var errorCode: ErrorCode? { (try? JSONDecoder().decode(ErrorEnvelope.self, from: self.body))?.error.code }
}

extension TransportStream: HTTPAnswer {
    var errorCode: ErrorCode? { nil }  // the body has not arrived yet
}

extension LatchkeySession {
    /// The longest `Retry-After` a 429 may ask for and still be waited for and retried once.
    static let shortRetryAfter: TimeInterval = 5

    /// Sends `request` with `policy`'s credentials through `send`, and does what an answer asks for, once each:
    /// - 401 to a request that carried a token: the token is replaced (one single-flight refresh, or one forced call to
    ///   the token provider shared by every request that met the same 401) and the request is sent again. When the
    ///   session ended or another began meanwhile, it is not sent again: ``LatchkeyError/notSignedIn``. A 401 that
    ///   refuses a password the request carried (`invalid_credentials`, `email_not_verified`) is handed back as it is:
    ///   the token was fine, and sending the password again would only count as one more failed try. From any origin but
    ///   the Latchkey server's, a 401 replaces the token only when it says the token is the problem
    ///   (`WWW-Authenticate: Bearer error="invalid_token"`) or the token was already within the clock-skew window of its
    ///   expiry: an app's API refusing for reasons of its own must not rotate the session.
    /// - 429 with a `Retry-After` of at most 5 seconds: waits that long on the session's clock and sends it again.
    func exchange<Answer: HTTPAnswer>(
        _ request: TransportRequest, policy: AuthPolicy, _ send: (TransportRequest) async throws -> Answer
    ) async throws -> Answer {
        var credentials = try await self.credentials(for: policy, replacing: nil)
        var refreshed = false
        var waited = false
        while true {
            let answer = try await send(credentials.applied(to: request))
            if answer.status == 401, !refreshed, let rejected = credentials.token, !Self.refusesPassword(answer),
                HTTPOrigin(request.url) == self.serverOrigin || Self.rejectsToken(answer) || self.isExpiring(token: rejected)
            {
                refreshed = true
                guard credentials.generation == self.generation else { throw LatchkeyError.notSignedIn }
                credentials = try await self.credentials(for: policy, replacing: rejected)
                continue
            }
            if answer.status == 429, !waited, let wait = RateLimitInfo(header: answer.header, now: self.clock.now())?.retryAfter,
                wait <= Self.shortRetryAfter
            {
                waited = true
                try await self.clock.sleep(for: wait)
                guard credentials.token == nil || credentials.generation == self.generation else { throw LatchkeyError.notSignedIn }
                continue
            }
            return answer
        }
    }

    /// Whether a 401 says the token is the problem: a `Bearer` challenge with `error="invalid_token"` (RFC 6750).
    private static func rejectsToken(_ answer: some HTTPAnswer) -> Bool {
        guard let header = answer.header("WWW-Authenticate") else { return false }
        return AuthenticationChallenge.parse(header).contains { $0.scheme == "bearer" && $0.parameters["error"] == "invalid_token" }
    }

    /// Whether `token` is within the clock-skew window of its expiry now (the stored session's expiry when it is that
    /// session's token, else the JWT's `exp`); `false` when its expiry is not known.
    private func isExpiring(token: String) -> Bool {
        let stored = self.credentials?.session.flatMap { $0.accessToken == token ? $0.accessTokenExpiresAt : nil }
        guard let expiry = stored ?? UnverifiedJWT.expiry(of: token) else { return false }
        return self.clock.now().addingTimeInterval(self.configuration.clockSkew) >= expiry
    }

    /// Whether a 401 refused the password a request carried rather than its token.
    private static func refusesPassword(_ answer: some HTTPAnswer) -> Bool {
        answer.errorCode == .invalidCredentials || answer.errorCode == .emailNotVerified
    }

    /// The credentials `policy` puts on a request; with `rejected`, a token other than that one (the server refused it).
    /// Throws ``LatchkeyError/notSignedIn`` when the session changed while the token was being found.
    func credentials(for policy: AuthPolicy, replacing rejected: String?) async throws -> RequestCredentials {
        let generation = self.generation
        var credentials = RequestCredentials(generation: generation)
        switch policy {
        case .none:
            return credentials
        case .deviceID:
            credentials.removesAuthorization = true
            credentials.deviceID = try self.headerDeviceID()
            return credentials
        case .bearer, .bearerAndDeviceID, .tokenInQuery, .deviceIDForGuests:
            credentials.token = try await self.bearer(replacing: rejected)
            guard generation == self.generation else { throw LatchkeyError.notSignedIn }
            credentials.tokenInQuery = policy == .tokenInQuery
            let isGuest = self.credentials?.session?.kind == .guest && self.configuration.tokenProvider == nil
            if policy == .bearerAndDeviceID || (policy == .deviceIDForGuests && isGuest) { credentials.deviceID = try self.headerDeviceID() }
            return credentials
        }
    }

    /// A bearer for the next request: the provider's, or the stored one (refreshed first when it is about to expire);
    /// with `rejected`, one that replaces that token.
    func bearer(replacing rejected: String?) async throws -> String {
        if self.configuration.tokenProvider != nil { return try await self.providerToken(replacing: rejected) }
        if let rejected { try await self.recover(fromRejected: rejected) }
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        guard self.isExpiring(session) else { return session.accessToken }
        guard session.refreshToken != nil else {
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            throw LatchkeyError.sessionExpired
        }
        return try await self.refreshSession(replacing: session.accessToken).accessToken
    }

    /// After the server rejected `token`: make sure the next attempt uses another one, or end the session.
    private func recover(fromRejected token: String) async throws {
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        guard session.accessToken == token else { return }  // already replaced while this request was in flight
        guard session.refreshToken != nil else {
            if self.adoptNewerSession(replacing: token) != nil { return }
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            throw LatchkeyError.sessionExpired
        }
        _ = try await self.refreshSession(replacing: token)
    }

    /// The device UUID for `X-Device-ID`, lowercase: from memory or the defaults mirror when they have it, so asset
    /// requests (seed 000) do not read the Keychain; otherwise from the secure store.
    func headerDeviceID() throws -> String {
        let deviceID = try self.credentials?.deviceID ?? self.mirroredDeviceID ?? self.loadCredentials().deviceID
        return deviceID.uuidString.lowercased()
    }
}
