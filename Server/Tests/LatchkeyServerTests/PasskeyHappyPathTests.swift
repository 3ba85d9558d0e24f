import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// The passkey routes end to end over HTTP with a software authenticator: a device user adds a passkey, a new phone signs
/// in with it as the same user, the list, rename and removal, the AASA file; and, with passkeys off, the 404 of every
/// passkey route. (The refusals are specified one by one in the passkey suites.)
@Suite(.timeLimit(.minutes(2)))
struct PasskeyHappyPathTests {
    static let origin = "http://localhost:8080"
    static let appID = "ABCDE12345.com.example.mystica"

    static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.passkeys.rpID = "localhost"
        configuration.passkeys.origins = [Self.origin]
        configuration.passkeys.appleAppIDs = [Self.appID]
    }

    @Test(arguments: Transport.allCases)
    func aDeviceUserAddsAPasskeyAndANewPhoneSignsInAsTheSameUser(_ transport: Transport) async throws {
        try await withServer(transport, configure: Self.configure) { client, _ in
            let device = try await client.registerDevice()
            var authenticator = SoftwareAuthenticator()

            // Add a passkey.
            let creation = try await Self.registrationOptions(client, bearer: device.accessToken)
            #expect(creation.options.rp.id == "localhost")
            #expect(creation.options.user.id == LatchkeyAPI.Base64URL.encode(Self.userHandle(device.userID)))
            #expect(creation.options.user.name == device.userID)
            #expect(creation.options.pubKeyCredParams.map(\.alg) == [-7, -8, -257])
            #expect(creation.options.authenticatorSelection.residentKey == "required")
            #expect(creation.options.attestation == "none" && creation.options.timeout == 300_000)
            #expect(creation.options.excludeCredentials.isEmpty)
            let challenge = try #require(LatchkeyAPI.Base64URL.decode(creation.options.challenge))
            #expect(challenge.count == 32)
            let registration = authenticator.register(
                rpID: "localhost", origin: Self.origin, challenge: challenge, userHandle: Self.userHandle(device.userID))
            let added = try await client.send(
                .post, "/api/v1/passkeys/register", bearer: device.accessToken,
                json: Self.body(challengeID: creation.challengeID, credential: registration.registrationResponseJSON(), extra: #""name": " iPhone ""#)
            )
            #expect(added.status == .created, "\(added.text)")
            let passkey = try added.decode(PasskeyResponse.self)
            #expect(passkey.name == "iPhone" && passkey.backedUp && passkey.lastUsedAt == nil)

            // The next options exclude it; list and rename.
            let again = try await Self.registrationOptions(client, bearer: device.accessToken)
            #expect(again.options.excludeCredentials.map(\.id) == [LatchkeyAPI.Base64URL.encode(authenticator.credentialID)])
            let renamed = try await client.send(
                .patch, "/api/v1/passkeys/\(passkey.passkeyID)", bearer: device.accessToken, json: #"{"name": "Work"}"#)
            #expect(renamed.status == .ok, "\(renamed.text)")
            #expect(try renamed.decode(PasskeyResponse.self).name == "Work")

            // A new phone signs in with it: the same user, and the phone joins the user's devices.
            let phone = UUID().uuidString
            let (signedIn, body) = try await Self.signIn(client, with: &authenticator, extra: #""device_id": "\#(phone)""#)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let tokens = try signedIn.decode(TokenPairResponse.self)
            #expect(tokens.userID == device.userID)
            #expect(tokens.deviceSecret != nil, "a new keyless device gets its secret once")
            let claims = try claims(of: tokens.accessToken)
            #expect(claims.amr == [.hardwareKey, .user] && claims.aal == .aal2, "\(claims)")
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: tokens.accessToken).decode(UserProfile.self)
            #expect(Set(profile.devices.map(\.deviceID)) == [device.userID, phone.lowercased()])

            // The challenge was spent.
            let replayed = try await client.send(.post, "/api/v1/passkeys/authenticate", json: body)
            #expect(replayed.status == .badRequest && replayed.envelope?.error.code == .invalidPasskey, "\(replayed.text)")

            let listed = try await client.send(.get, "/api/v1/passkeys", bearer: tokens.accessToken).decode(PasskeyListResponse.self)
            #expect(listed.passkeys.map(\.passkeyID) == [passkey.passkeyID] && listed.passkeys.first?.lastUsedAt != nil)

            // The AASA file.
            let association = try await client.send(.get, "/.well-known/apple-app-site-association")
            #expect(association.status == .ok && association.headers[.contentType] == "application/json")
            #expect(association.text == #"{"webcredentials":{"apps":["\#(Self.appID)"]}}"#)

            // Removing it: 204, then it signs in no more; the sessions it started go on.
            let removed = try await client.send(.delete, "/api/v1/passkeys/\(passkey.passkeyID)", bearer: device.accessToken)
            #expect(removed.status == .noContent, "\(removed.text)")
            let (refused, _) = try await Self.signIn(client, with: &authenticator)
            #expect(refused.status == .unauthorized && refused.envelope?.error.code == .unknownCredential, "\(refused.text)")
            #expect(try await client.send(.get, "/api/v1/users/me", bearer: tokens.accessToken).status == .ok)
        }
    }

    static func userHandle(_ userID: String) -> [UInt8] {
        withUnsafeBytes(of: UUID(uuidString: userID)!.uuid) { Array($0) }
    }

    /// `{"challenge_id": …, "credential": …}` with `extra` members, the credential's JSON as the authenticator wrote it.
    static func body(challengeID: String, credential: Data, extra: String? = nil) -> String {
        let members =
            [#""challenge_id": "\#(challengeID)""#, #""credential": "# + String(decoding: credential, as: UTF8.self)] + (extra.map { [$0] } ?? [])
        return "{" + members.joined(separator: ", ") + "}"
    }

    static func registrationOptions(_ client: any TestClientProtocol, bearer: String) async throws -> PasskeyRegistrationOptionsResponse {
        let options = try await client.send(.post, "/api/v1/passkeys/register/options", bearer: bearer)
        guard options.status == .ok else { throw TestFailure("register/options answered \(options.status): \(options.text)") }
        return try options.decode(PasskeyRegistrationOptionsResponse.self)
    }

    /// Asks for sign-in options and answers them with `authenticator`; returns the answer and the body sent.
    static func signIn(
        _ client: any TestClientProtocol, with authenticator: inout SoftwareAuthenticator, extra: String? = nil
    ) async throws -> (TestResponse, String) {
        let answer = try await client.send(.post, "/api/v1/passkeys/authenticate/options")
        guard answer.status == .ok else { throw TestFailure("authenticate/options answered \(answer.status): \(answer.text)") }
        let options = try answer.decode(PasskeyAuthenticationOptionsResponse.self)
        #expect(options.options.rpId == "localhost" && options.options.allowCredentials.isEmpty)
        let challenge = try #require(LatchkeyAPI.Base64URL.decode(options.options.challenge))
        let assertion = authenticator.assert(rpID: "localhost", origin: Self.origin, challenge: challenge)
        let body = Self.body(challengeID: options.challengeID, credential: assertion.authenticationResponseJSON(), extra: extra)
        return (try await client.send(.post, "/api/v1/passkeys/authenticate", json: body), body)
    }

    @Test func withPasskeysOffEveryPasskeyRouteAnswers404PasskeysDisabled() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/api/v1/passkeys/register/options"), (.post, "/api/v1/passkeys/register"), (.post, "/api/v1/passkeys/authenticate/options"),
                (.post, "/api/v1/passkeys/authenticate"), (.get, "/api/v1/passkeys"), (.patch, "/api/v1/passkeys/\(UUID().uuidString)"),
                (.delete, "/api/v1/passkeys/\(UUID().uuidString)"), (.get, "/.well-known/apple-app-site-association"),
            ]
            for (method, path) in routes {
                for bearer in [nil, device.accessToken] {
                    let answer = try await client.send(method, path, bearer: bearer, json: method == .post || method == .patch ? "{}" : nil)
                    #expect(answer.status == .notFound, "\(method) \(path): \(answer.text)")
                    #expect(answer.envelope?.error.code == .passkeysDisabled, "\(method) \(path): \(answer.text)")
                    #expect(answer.envelope?.error.message == "Passkeys are off: set passkeys.rp-id.")
                }
            }
        }
    }
}
