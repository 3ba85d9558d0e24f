import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34: `app-attest.unattested-guest-limit` replaces the guest meter's limit for unattested devices — on an
/// embedding backend's own metered route (``MeterMiddleware``, seed 003's "5 edits a day") as on forward auth — so
/// attested devices get 5 edits a day and unattested ones 1.
@Suite(.timeLimit(.minutes(3)))
struct AppAttestSpecMeterTests {
    typealias Spec = AppAttestSpec

    /// A backend embedding Latchkey with `POST /app/edit` behind the `actions` meter, on a spec server.
    static func withBackend(policy: String, _ settings: [String: any Sendable], _ body: @Sendable (Spec) async throws -> Void) async throws {
        let (server, authority) = try await Spec.make(policy: policy, settings)
        defer { try? FileManager.default.removeItem(at: server.directory) }
        let router = buildRouter(services: server.services)
        router.group("app")
            .add(middleware: BearerAuthenticator(verifier: server.services.verifier))
            .add(middleware: MeterMiddleware(meter: "actions", services: server.services))
            .post("edit") { _, _ -> Response in Response(status: .ok) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: server.logger)
        do {
            try await app.test(.live) { client in try await body(Spec(client: client, server: server, authority: authority)) }
            await server.close()
        } catch {
            await server.close()
            throw error
        }
    }

    static func edit(_ spec: Spec, token: String, device: UUID) async throws -> TestResponse {
        try await spec.client.send(.post, "/app/edit", bearer: token, headers: [HTTPField.Name("X-Device-ID")!: device.uuidString])
    }

    @Test(arguments: ["report", "guests"])
    func anUnattestedGuestGetsTheUnattestedLimitAndAnAttestedOneTheMeters(policy: String) async throws {
        try await Self.withBackend(policy: policy, ["app-attest.unattested-guest-limit": 1]) { spec in
            let plainID = UUID()
            let plain = try await spec.guest(plainID)
            #expect(plain.status == .created, "\(plain.text)")
            let plainToken = try plain.decode(GuestSessionResponse.self).accessToken
            let first = try await Self.edit(spec, token: plainToken, device: plainID)
            #expect(first.status == .ok)
            #expect(Spec.header(first, "X-RateLimit-Limit") == "1")
            #expect(try await Self.edit(spec, token: plainToken, device: plainID).status == .tooManyRequests)

            let attestedID = UUID()
            let attested = try await spec.attestByGuest(attestedID, Spec.Device())
            for remaining in (0..<5).reversed() {
                let response = try await Self.edit(spec, token: attested.accessToken, device: attestedID)
                #expect(response.status == .ok)
                #expect(Spec.header(response, "X-RateLimit-Limit") == "5")
                #expect(Spec.header(response, "X-RateLimit-Remaining") == String(remaining))
            }
            #expect(try await Self.edit(spec, token: attested.accessToken, device: attestedID).status == .tooManyRequests)
        }
    }
}
