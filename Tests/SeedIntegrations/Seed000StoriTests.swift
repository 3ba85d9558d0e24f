import Foundation
import LatchkeyClient
import Testing

/// Seed 000 (Stori) through ``StoriAuth``: one device UUID at registration, in the access code's `sub` and on asset
/// requests; the JWT on Composer calls only.
@Suite struct Seed000StoriTests {
    /// Latchkey's answers, and Composer's. An access code here is `code:<device UUID>`: the server says its `sub` is that UUID.
    static func install() -> StubbedInstall {
        StubbedInstall { request in
            switch (request.url.host ?? "", request.url.path) {
            case ("auth.stori.example", "/api/v1/users/register"):
                let body = try JSONDecoder().decode(RegisterUserRequest.self, from: request.body ?? Data())
                return .json(201, RegisterUserResponse(userID: body.userID, created: true))
            case ("auth.stori.example", "/api/v1/validate-token"):
                let sub = String(request.bearer?.dropFirst("code:".count) ?? "")
                return .json(200, ValidateTokenResponse(sub: sub, exp: 1_900_000_000, kind: .accessCode))
            case ("composer.stori.example", "/api/v1/compose/stream"):
                return TransportResponse(
                    status: 200, headers: ["Content-Type": "text/event-stream"], body: Data("data: bar 1\n\ndata: bar 2\n\n".utf8))
            case ("composer.stori.example", "/api/v1/assets/drum-kits"):
                return .json(200, ["kits": ["909"]])
            default:
                return TransportResponse(status: 404)
            }
        }
    }

    @Test func theDeviceUUIDRegistersRedeemsItsCodeAndAloneOpensTheAssetsWhileComposerGetsTheJWTOnly() async throws {
        let install = Self.install()
        let app = StoriAuth(session: install.session(StoriAuth.configuration))

        guard case .accessCode(let deviceID) = await app.launch() else {
            Issue.record("no access-code screen")
            return
        }
        let uuid = deviceID.uuidString.lowercased()
        let register = try #require(install.transport.requests(to: "auth.stori.example", "/api/v1/users/register").first)
        #expect(register.header("Authorization") == nil)
        #expect(try JSONDecoder().decode(RegisterUserRequest.self, from: register.body ?? Data()).userID == uuid)

        try await app.redeem("code:\(uuid)")
        #expect(try await app.compose("a bossa nova") == ["bar 1", "bar 2"])
        _ = try await app.drumKits()
        let socket = try await app.mcpSocketRequest()

        let compose = try #require(install.transport.requests(to: "composer.stori.example", "/api/v1/compose/stream").first)
        #expect(compose.bearer == "code:\(uuid)")
        #expect(compose.header("X-Device-ID") == nil)
        let kits = try #require(install.transport.requests(to: "composer.stori.example", "/api/v1/assets/drum-kits").first)
        #expect(kits.header("X-Device-ID") == uuid)
        #expect(kits.header("Authorization") == nil)
        #expect(socket.url?.query == "token=code:\(uuid)")
        #expect(socket.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(await StoriAuth(session: install.session(StoriAuth.configuration)).launch() == .composer)  // the code is kept
    }

    @Test func aCodeIssuedForAnotherDeviceIsRefusedWithASentenceSayingSo() async throws {
        let install = Self.install()
        let app = StoriAuth(session: install.session(StoriAuth.configuration))
        _ = await app.launch()

        let error = await #expect(throws: LatchkeyError.self) { try await app.redeem("code:\(UUID().uuidString.lowercased())") }
        #expect(StoriAuth.message(for: try #require(error)) == "This access code was issued for another device. Ask support for a code for this one.")
        guard case .accessCode = await app.launch() else {
            Issue.record("the refused code was kept")
            return
        }
    }
}
