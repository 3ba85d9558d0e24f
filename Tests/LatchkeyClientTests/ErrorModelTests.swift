import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 30, items 7, 8, 11 and 12: errors apps can grow with, and wire values a newer server may add.
@Suite struct ErrorModelTests {
    // MARK: Item 7 — open wire values

    @Test func aKindThisSDKDoesNotKnowDecodesAsItself() throws {
        let profile = try JSONDecoder.iso8601.decode(UserProfile.self, from: Samples.profileJSON(kind: "robot", tokenKind: "drone"))
        #expect(profile.kind == UserKind(rawValue: "robot"))
        #expect(profile.kind != .device)
        #expect(profile.tokenKind.rawValue == "drone")
        let validation = try JSONDecoder().decode(
            ValidateTokenResponse.self, from: Data(#"{"valid":true,"sub":"u-1","kind":"robot","exp":1}"#.utf8))
        #expect(validation.kind == TokenKind(rawValue: "robot"))
        #expect(try JSONEncoder().encode(UserKind(rawValue: "robot")) == Data(#""robot""#.utf8))
        #expect(UserKind.allCases.map(\.rawValue) == ["device", "federated", "guest"])
    }

    @Test func currentUserReadsAProfileOfAKindThisSDKDoesNotKnow() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 200, body: Samples.profileJSON(kind: "robot", tokenKind: "session")) }
        try fixture.storeSession()
        #expect(try await fixture.session().currentUser().kind.rawValue == "robot")
    }

    // MARK: Item 8 — a small closed set of categories, codes for the rest

    @Test func everyRefusalIsRejectedWithItsCodeStatusAndMessage() {
        let answers: [(TransportResponse, LatchkeyError)] = [
            (.error(401, .invalidCredentials, "Wrong."), .refusal(401, .invalidCredentials, "Wrong.")),
            (.error(409, .identityAlreadyLinked, "Taken."), .refusal(409, .identityAlreadyLinked, "Taken.")),
            (.error(403, .reauthenticationRequired, "Again."), .refusal(403, .reauthenticationRequired, "Again.")),
            (.error(418, ErrorCode(rawValue: "a_code_added_later"), "Later."), .refusal(418, ErrorCode(rawValue: "a_code_added_later"), "Later.")),
            (.error(503, .serviceUnavailable, "Down."), .failure(503, .serviceUnavailable, "Down.")),
            (.error(502, .upstreamError, "Apple."), .failure(502, .upstreamError, "Apple.")),
        ]
        for (answer, expected) in answers {
            #expect(LatchkeyError.from(answer, now: Date()) == expected)
        }
        #expect(
            LatchkeyError.from(.error(429, .rateLimited, headers: ["Retry-After": "7"]), now: Date()) == .rateLimited(RateLimitInfo(retryAfter: 7)))
    }

    /// An app's exhaustive `switch` over the categories: it must keep compiling (no `default`) when the server grows.
    @Test func anAppSwitchesOverTheCategoriesWithoutADefault() {
        func advice(_ error: LatchkeyError) -> String {
            switch error {
            case .notSignedIn, .sessionExpired: "sign in"
            case .offline: "check your connection"
            case .connectionRefused: "update the app"
            case .rateLimited: "wait"
            case .mfaRequired: "ask for the code"
            case .rejected(let details) where details.code == .invalidCredentials: "wrong password"
            case .rejected: "refused"
            case .server: "try later"
            case .storeUnavailable(.locked): "unlock"
            case .storeUnavailable: "reinstall"
            case .invalidRequest: "bug"
            }
        }
        #expect(advice(.refusal(401, .invalidCredentials, "x")) == "wrong password")
        #expect(advice(.refusal(418, ErrorCode(rawValue: "a_code_added_later"), "x")) == "refused")
        #expect(advice(.storeUnavailable(.locked)) == "unlock")
    }

    @Test func knownCodesReadAsTheSDKsSentenceUnknownOnesAsTheServersMessage() {
        #expect(LatchkeyError.refusal(401, .invalidCredentials, "server words").description == "The email or password is not right.")
        #expect(LatchkeyError.refusal(418, ErrorCode(rawValue: "a_code_added_later"), "Server words.").description == "Server words.")
        #expect(LatchkeyError.refusal(401, .invalidToken, "Expired.").description == "The server did not accept your sign-in: Expired.")
        #expect(LatchkeyError.refusal(400, .invalidKey, "Too long.").description == "The storage key was refused: Too long.")
        #expect(LatchkeyError.failure(503, .serviceUnavailable, "x").description == "The server had a problem (HTTP 503). Try again later.")
        #expect(LatchkeyError.storeUnavailable(.locked).description.contains("locked"))
        #expect(LatchkeyError.storeUnavailable(.misconfigured("no entitlement")).description.contains("no entitlement"))
        #expect(LatchkeyError.rateLimited(RateLimitInfo(retryAfter: 1)).description == "Too many requests. Try again in 1 second.")
        #expect(LatchkeyError.rateLimited(RateLimitInfo(retryAfter: 90)).description == "Too many requests. Try again in 2 minutes.")
    }

    /// The string catalog holds every key the SDK uses, with the English the code falls back to, and nothing else.
    @Test func theStringCatalogMatchesTheSentencesInCode() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/LatchkeyClient/Resources/Localizable.xcstrings")
        let catalog = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        #expect(catalog["sourceLanguage"] as? String == "en")
        let strings = try #require(catalog["strings"] as? [String: [String: Any]])
        var english: [String: String] = [:]
        for (key, entry) in strings {
            let localizations = entry["localizations"] as? [String: [String: [String: String]]]
            english[key] = localizations?["en"]?["stringUnit"]?["value"]
        }
        #expect(english == ErrorMessages.english)
        let article = try String(
            contentsOf: url.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("LatchkeyClient.docc/ErrorMessages.md"),
            encoding: .utf8)
        for key in ErrorMessages.english.keys { #expect(article.contains("| `\(key)` |"), "the DocC article lists \(key)") }
    }

    // MARK: Item 11 — one spelling for a session's end

    @Test func anExpiredSessionIsSignedOutWithTheReasonSessionExpired() async throws {
        let fixture = Fixture { _ in .error(401, .invalidGrant) }
        try fixture.storeSession(lifetime: 10)
        let session = fixture.session()
        #expect(await session.bootstrap() == .signedOut(reason: .sessionExpired))
        #expect(AuthState.signedOut(reason: .sessionExpired).description == "signed out (sessionExpired)")
    }

    // MARK: Item 12 — transport failures keep their URLError code

    @Test(arguments: [
        (URLError.Code.notConnectedToInternet, LatchkeyError.offline(.notConnectedToInternet)),
        (.timedOut, .offline(.timedOut)),
        (.cannotFindHost, .offline(.cannotFindHost)),
        (.networkConnectionLost, .offline(.networkConnectionLost)),
        (.appTransportSecurityRequiresSecureConnection, .connectionRefused(.appTransportSecurityRequiresSecureConnection)),
        (.serverCertificateUntrusted, .connectionRefused(.serverCertificateUntrusted)),
        (.badURL, .connectionRefused(.badURL)),
    ])
    func aTransportFailureKeepsItsCode(code: URLError.Code, expected: LatchkeyError) async throws {
        let fixture = Fixture { _ in throw URLError(code) }
        try fixture.storeSession()
        #expect(await thrownError { try await fixture.session().currentUser() } == expected)
    }

    @Test func aCancelledRequestIsCancellationNotOffline() async throws {
        let fixture = Fixture { _ in throw URLError(.cancelled) }
        try fixture.storeSession()
        await #expect(throws: CancellationError.self) { try await fixture.session().currentUser() }
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
