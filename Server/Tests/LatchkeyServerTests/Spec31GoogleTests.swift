import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Issue 31, Google Sign-In, from the issue's text: `POST /api/v1/auth/google {id_token, nonce?}` against a Google-like
/// issuer on loopback (its own RSA key and JWKS), configured through `google.client-ids` and `google.jwks-url`.
@Suite struct Spec31GoogleTests {
    typealias Issuer = Spec31Issuer

    static func subject() -> String { String(UInt64.random(in: 100_000_000_000...999_999_999_999)) + "\(Int.random(in: 10...99))" }

    @Test func aNewGoogleSubjectIs201AndTheSameSubjectAgainIs200AsTheSameUser() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let subject = Self.subject()
            let first = try await Spec31.googleSignIn(client, server, subject: subject)
            Spec31.expectStatus(first, .created, nil, "first sign-in")
            let pair = try first.decode(TokenPairResponse.self)
            #expect(UUID(uuidString: pair.userID) != nil)
            #expect(pair.userID != subject)
            #expect(pair.deviceSecret == nil)
            let second = try await Spec31.googleSignIn(client, server, subject: subject)
            Spec31.expectStatus(second, .ok, nil, "second sign-in")
            #expect(try second.decode(TokenPairResponse.self).userID == pair.userID)
            let profile = try await client.me(pair.accessToken).decode(UserProfile.self)
            #expect(profile.kind == .federated)
            #expect(profile.identities.map(\.provider) == ["google"])
            #expect(profile.identities.map(\.subject) == [subject])
            #expect(try await client.refresh(pair.refreshToken).status == .ok)
            #expect(try Forge.claims(of: pair.accessToken).amr == [.google])
        }
    }

    @Test(arguments: ["https://accounts.google.com", "accounts.google.com"])
    func bothFormsOfGooglesIssuerAreAccepted(issuer: String) async throws {
        try await Spec31.withGoogle { client, server, _ in
            let answer = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iss": issuer])
            Spec31.expectStatus(answer, .created, nil, issuer)
        }
    }

    @Test func theWebClientIDIsAnAcceptedAudienceToo() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let answer = try await Spec31.googleSignIn(
                client, server, subject: Self.subject(), extra: ["aud": Issuer.webClientID, "azp": Issuer.appClientID])
            Spec31.expectStatus(answer, .created, nil, "web client aud")
        }
    }

    @Test func aTokenWithoutAzpIsAccepted() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let nonce = UUID().uuidString
            var claims = Issuer.googleClaims(now: server.clock.now(), subject: Self.subject(), nonce: nonce)
            claims["azp"] = nil
            Spec31.expectStatus(try await Spec31.google(client, token: Issuer.token(claims), nonce: nonce), .created, nil, "no azp")
        }
    }

    /// One bad token per rule; each 401 `invalid_token`, and nothing is created (the subject signs in as new afterwards).
    enum BadToken: String, CaseIterable, CustomStringConvertible {
        case wrongIssuer, appleIssuer, issuerHTTP, wrongAudience, missingAudience, audienceArrayWithoutOurs, wrongAzp, expired,
            expiredBeyondLeeway, issuedInTheFuture, missingExp, hashedNonce, tokenWithoutNonce, nonceMismatch, nonceWithoutRequestNonce,
            unknownKid, forgedSignature, hs256WithThePublicKey, algNone, missingKid, missingSubject, notAJWT, payloadTampered
        var description: String { self.rawValue }
    }

    @Test(arguments: BadToken.allCases)
    func aBadTokenIs401InvalidTokenAndCreatesNothing(bad: BadToken) async throws {
        try await Spec31.withGoogle { client, server, _ in
            let subject = Self.subject()
            let now = Int(server.clock.now().timeIntervalSince1970)
            let raw = "raw-\(UUID().uuidString)"
            var requestNonce: String? = raw
            var claims = Issuer.googleClaims(now: server.clock.now(), subject: subject, nonce: raw)
            var (kid, alg, key): (String?, String, _) = (Issuer.googleKid, "RS256", Issuer.key)
            var token: String?
            switch bad {
            case .wrongIssuer: claims["iss"] = "https://accounts.google.com.evil.example"
            case .appleIssuer: claims["iss"] = "https://appleid.apple.com"
            case .issuerHTTP: claims["iss"] = "http://accounts.google.com"
            case .wrongAudience: (claims["aud"], claims["azp"]) = ("999-other.apps.googleusercontent.com", nil)
            case .missingAudience: (claims["aud"], claims["azp"]) = (nil, nil)
            case .audienceArrayWithoutOurs: (claims["aud"], claims["azp"]) = (["999-other.apps.googleusercontent.com"], nil)
            case .wrongAzp: claims["azp"] = "999-other.apps.googleusercontent.com"
            case .expired: (claims["iat"], claims["exp"]) = (now - 7200, now - 3600)
            case .expiredBeyondLeeway: (claims["iat"], claims["exp"]) = (now - 3700, now - 61 - 10)
            case .issuedInTheFuture: (claims["iat"], claims["exp"]) = (now + 120, now + 3720)
            case .missingExp: claims["exp"] = nil
            case .hashedNonce: claims["nonce"] = Issuer.sha256Hex(raw)
            case .tokenWithoutNonce: claims["nonce"] = nil
            case .nonceMismatch: claims["nonce"] = raw + "x"
            case .nonceWithoutRequestNonce: requestNonce = nil
            case .unknownKid: (kid, key) = ("google-9", Issuer.rogue)
            case .forgedSignature: key = Issuer.rogue
            case .hs256WithThePublicKey: alg = "HS256"
            case .algNone: alg = "none"
            case .missingKid: kid = nil
            case .missingSubject: claims["sub"] = nil
            case .notAJWT: token = "not-a-jwt"
            case .payloadTampered:
                let good = Issuer.token(claims)
                token = try Forge.flippingPayloadCharacter(good)
            }
            let answer = try await Spec31.google(client, token: token ?? Issuer.token(claims, kid: kid, alg: alg, key: key), nonce: requestNonce)
            Spec31.expectInvalidToken(answer, bad.rawValue)
            #expect(try await Spec31.userCount(server) == 0, "\(bad): a user was created")
            let good = try await Spec31.googleSignIn(client, server, subject: subject)
            Spec31.expectStatus(good, .created, nil, "\(bad): the subject afterwards")
        }
    }

    /// The nonce is compared raw: a token whose nonce is the request's byte for byte is accepted (no hashing).
    @Test func theNonceIsComparedRawByteForByte() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let nonce = "Ünïcode nonce/+= \(UUID().uuidString)"
            let token = Issuer.token(Issuer.googleClaims(now: server.clock.now(), subject: Self.subject(), nonce: nonce))
            Spec31.expectStatus(try await Spec31.google(client, token: token, nonce: nonce), .created, nil, "raw nonce")
            let hashedRequest = Issuer.token(Issuer.googleClaims(now: server.clock.now(), subject: Self.subject(), nonce: nonce))
            // The client sending the hash of what the token holds is a mismatch too.
            Spec31.expectInvalidToken(try await Spec31.google(client, token: hashedRequest, nonce: Issuer.sha256Hex(nonce)), "hashed request nonce")
        }
    }

    @Test func aTokenWithoutNonceAndARequestWithoutNonceIsAccepted() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let token = Issuer.token(Issuer.googleClaims(now: server.clock.now(), subject: Self.subject(), nonce: nil))
            Spec31.expectStatus(try await Spec31.google(client, token: token, nonce: nil), .created, nil, "no nonce either side")
        }
    }

    @Test func expAndIatWithinTheDefaultLeewayOf60SecondsAreAccepted() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let now = Int(server.clock.now().timeIntervalSince1970)
            let late = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now - 3630, "exp": now - 30])
            Spec31.expectStatus(late, .created, nil, "expired 30 s ago")
            let early = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now + 30, "exp": now + 3630])
            Spec31.expectStatus(early, .created, nil, "issued 30 s ahead")
            let tooEarly = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now + 90, "exp": now + 3690])
            Spec31.expectInvalidToken(tooEarly, "issued 90 s ahead")
        }
    }

    @Test func googleLeewayWidensAndNarrowsTheTolerance() async throws {
        try await Spec31.withGoogle(google: ["leeway": 5]) { client, server, _ in
            let now = Int(server.clock.now().timeIntervalSince1970)
            Spec31.expectInvalidToken(
                try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now - 3630, "exp": now - 30]),
                "leeway 5, exp -30")
            Spec31.expectInvalidToken(
                try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now + 30, "exp": now + 3630]),
                "leeway 5, iat +30")
        }
        try await Spec31.withGoogle(google: ["leeway": 300]) { client, server, _ in
            let now = Int(server.clock.now().timeIntervalSince1970)
            Spec31.expectStatus(
                try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["iat": now - 3800, "exp": now - 200]), .created, nil,
                "leeway 300, exp -200")
        }
    }

    @Test func anEmailIsKeptOnlyWhenVerifiedAndShowsOnTheIdentityInUsersMe() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let verified = try await Spec31.googleSignIn(
                client, server, subject: Self.subject(), extra: ["email": "ann@gmail.com", "email_verified": true])
            let verifiedPair = try verified.decode(TokenPairResponse.self)
            let me = try Spec31.object(try await client.me(verifiedPair.accessToken))
            let identity = try #require((me["identities"] as? [[String: Any]])?.first)
            #expect(identity["provider"] as? String == "google")
            #expect(identity["email"] as? String == "ann@gmail.com", "users/me identity: \(identity)")

            for (label, extra) in [
                ("email_verified false", ["email": "bob@gmail.com", "email_verified": false] as [String: Any]),
                ("email_verified missing", ["email": "bob@gmail.com"]),
            ] {
                let answer = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: extra)
                Spec31.expectStatus(answer, .created, nil, label)
                let pair = try answer.decode(TokenPairResponse.self)
                let text = try await client.me(pair.accessToken).text
                #expect(!text.contains("bob@gmail.com"), "\(label): the unverified email is kept: \(text)")
                let stored = try await server.services.database.read { sql in
                    try await sql.raw("SELECT email FROM identities WHERE user_id = \(bind: pair.userID)").first()
                        .map { try $0.decode(column: "email", as: String?.self) }
                }
                #expect(stored == .some(nil), "\(label): identities.email is \(String(describing: stored))")
            }
        }
    }

    /// The email never matches or merges accounts: another Google subject or an Apple user with the same verified email is
    /// another user.
    @Test func theSameVerifiedEmailNeverMergesAccounts() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let email = ["email": "same@gmail.com", "email_verified": true] as [String: Any]
            let first = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: email).decode(TokenPairResponse.self)
            let second = try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: email)
            Spec31.expectStatus(second, .created, nil, "another subject, same email")
            #expect(try second.decode(TokenPairResponse.self).userID != first.userID)
            let apple = try await Spec31.appleSignIn(client, server, subject: "001.\(UUID().uuidString)")
            Spec31.expectStatus(apple, .created, nil, "apple")
            #expect(try apple.decode(TokenPairResponse.self).userID != first.userID)
            #expect(try await Spec31.userCount(server) == 3)
        }
    }

    @Test func withHostedDomainsTheHdMustBeOneOfThemAndAConsumerAccountIsRefused() async throws {
        try await Spec31.withGoogle(google: ["hosted-domains": ["example.com", "example.org"]]) { client, server, _ in
            Spec31.expectStatus(
                try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["hd": "example.org"]), .created, nil, "hd listed")
            Spec31.expectInvalidToken(try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["hd": "evil.com"]), "hd other")
            Spec31.expectInvalidToken(try await Spec31.googleSignIn(client, server, subject: Self.subject()), "no hd")
            #expect(try await Spec31.userCount(server) == 1)
        }
    }

    @Test func withoutHostedDomainsAnyHdOrNoneIsAccepted() async throws {
        try await Spec31.withGoogle { client, server, _ in
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject(), extra: ["hd": "x.com"]), .created)
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject()), .created)
        }
    }

    @Test func aBearerLinksGoogleToTheSignedInUser() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let device = try await client.registerDevice()
            let subject = Self.subject()
            let linked = try await Spec31.googleSignIn(client, server, subject: subject, bearer: device.accessToken)
            Spec31.expectStatus(linked, .ok, nil, "link")
            #expect(try linked.decode(TokenPairResponse.self).userID == device.userID)
            let profile = try await client.me(device.accessToken).decode(UserProfile.self)
            #expect(profile.identities.map(\.provider) == ["google"])
            #expect(profile.identities.map(\.subject) == [subject])
            let later = try await Spec31.googleSignIn(client, server, subject: subject)
            Spec31.expectStatus(later, .ok, nil, "sign in later")
            #expect(try later.decode(TokenPairResponse.self).userID == device.userID)
        }
    }

    @Test func linkingASubjectAnotherUserHoldsIs409AndMergesNothing() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let subject = Self.subject()
            let owner = try await Spec31.googleSignIn(client, server, subject: subject).decode(TokenPairResponse.self)
            let device = try await client.registerDevice()
            let refused = try await Spec31.googleSignIn(client, server, subject: subject, bearer: device.accessToken)
            Spec31.expectStatus(refused, .conflict, .identityAlreadyLinked, "link conflict")
            #expect(try await client.me(device.accessToken).decode(UserProfile.self).identities.isEmpty)
            #expect(try await Spec31.googleSignIn(client, server, subject: subject).decode(TokenPairResponse.self).userID == owner.userID)
        }
    }

    @Test func aBadBearerIs401AndCreatesNothing() async throws {
        try await Spec31.withGoogle { client, server, _ in
            Spec31.expectInvalidToken(try await Spec31.googleSignIn(client, server, subject: Self.subject(), bearer: "not-a-token"), "bad bearer")
            #expect(try await Spec31.userCount(server) == 0)
        }
    }

    @Test(arguments: [
        #"{}"#, #"[]"#, #"{"nonce":"n"}"#, #"{"id_token":42}"#, #"{"id_token":["a"]}"#, #"{"id_token":"a.b.c","nonce":7}"#, "not json",
        #"{"id_token":"a.b.c""#,
    ])
    func aMalformedBodyIs400InvalidRequestAndWritesNothing(body: String) async throws {
        try await Spec31.withGoogle { client, server, _ in
            let before = try await Spec31.snapshot(server)
            let answer = try await client.send(.post, "/api/v1/auth/google", json: body)
            Spec31.expectStatus(answer, .badRequest, .invalidRequest, body)
            #expect(try await Spec31.snapshot(server) == before)
        }
    }

    @Test func aDisabledUsersGoogleSignInIs403UserDisabled() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let subject = Self.subject()
            let pair = try await Spec31.googleSignIn(client, server, subject: subject).decode(TokenPairResponse.self)
            #expect(try await server.cli("users", "disable", pair.userID).exitCode == 0)
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: subject), .forbidden, .userDisabled, "disabled google user")
        }
    }

    /// `/api/v1/auth/google` counts in `limits.sign-in` with Apple: one budget for both routes.
    @Test func googleAndAppleShareTheSignInLimit() async throws {
        let configure: @Sendable (inout LatchkeyConfiguration) -> Void = { configuration in
            configuration.limits.signIn = RateLimitPolicy(name: "sign-in", limit: 3, window: 300)
        }
        try await Spec31.withGoogle(configure: configure) { client, server, _ in
            for _ in 0..<3 { Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject()), .created) }
            Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject()), .tooManyRequests, .rateLimited, "4th google")
            Spec31.expectStatus(
                try await Spec31.appleSignIn(client, server, subject: "001.\(UUID().uuidString)"), .tooManyRequests, .rateLimited,
                "apple after 3 google")
        }
        try await Spec31.withGoogle(configure: configure) { client, server, _ in
            for _ in 0..<3 { Spec31.expectStatus(try await Spec31.appleSignIn(client, server, subject: "001.\(UUID().uuidString)"), .created) }
            Spec31.expectStatus(
                try await Spec31.googleSignIn(client, server, subject: Self.subject()), .tooManyRequests, .rateLimited, "google after 3 apple")
        }
    }

    @Test func theJWKSIsCachedNotFetchedPerRequest() async throws {
        try await Spec31.withGoogle { client, server, issuer in
            for _ in 0..<4 { Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject()), .created) }
            #expect(issuer.fetches == 1)
        }
    }

    @Test func theEnvironmentVariableSetsTheJWKSURL() async throws {
        let issuer = Spec31Issuer()
        try await issuer.run { base in
            let server = try await Spec31.server(
                issuer: base, useJWKSFile: false, environment: ["LATCHKEY_GOOGLE_JWKS_URL": "\(base)/oauth2/v3/certs"])
            try await server.test(.live) { client in
                Spec31.expectStatus(try await Spec31.googleSignIn(client, server, subject: Self.subject()), .created, nil, "env jwks-url")
            }
        }
    }

    @Test func theJWKSURLDefaultsToGooglesCerts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spec31-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await LatchkeyCLI.run(["config", "show"], masterKey: TestServer.masterKey, workingDirectory: directory)
        #expect(run.exitCode == 0, "\(run)")
        let line = run.stdoutLines.first { $0.contains("google.jwks-url") }
        #expect(line?.contains("https://www.googleapis.com/oauth2/v3/certs") == true, "\(String(describing: line))")
        #expect(run.stdoutLines.contains { $0.contains("google.client-ids") })
        #expect(run.stdoutLines.contains { $0.contains("google.hosted-domains") })
        #expect(run.stdoutLines.first { $0.contains("google.leeway") }?.contains("60") == true)
    }

    /// `google.jwks-url` is https, http only for a loopback host: the server refuses to start with another http URL.
    @Test(arguments: ["http://www.googleapis.com/oauth2/v3/certs", "http://example.com/certs", "ftp://127.0.0.1/certs"])
    func anHTTPJWKSURLForANonLoopbackHostIsRefusedAtStart(url: String) async throws {
        // The same settings with a loopback http URL start (so the refusal below is the URL's).
        let loopback = try await Spec31.server(issuer: "http://127.0.0.1:9", google: ["jwks-url": "http://127.0.0.1:9/certs"])
        await loopback.close()
        var started = false
        do {
            let server = try await Spec31.server(issuer: "http://127.0.0.1:9", google: ["jwks-url": url])
            started = true
            await server.close()
        } catch {}
        #expect(!started, "the server started with google.jwks-url \(url)")
    }

    @Test func googleClientIDsIsAJSONArrayInTheFile() async throws {
        let configuration = try await Spec31.configuration(google: ["client-ids": [Issuer.appClientID, Issuer.webClientID]])
        #expect(configuration.settings["google.client-ids"] != nil, "google.client-ids was not read: \(configuration.settings.keys.sorted())")
    }
}
