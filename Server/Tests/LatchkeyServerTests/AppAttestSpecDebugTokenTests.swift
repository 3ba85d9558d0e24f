import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing

/// Issue 34's debug provider for simulators and CI: `latchkey app-attest debug-token create|list|revoke` mints secrets an
/// app sends as `"app_attest": {"debug_token": "…"}`; off unless `app-attest.allow-debug-tokens`; every use audited; the
/// token never in a log line, an error message or a listing.
@Suite(.timeLimit(.minutes(4)))
struct AppAttestSpecDebugTokenTests {
    typealias Spec = AppAttestSpec

    /// The audit action of one use (the contract's name).
    static let usedAction = "app_attest.debug_token_used"

    /// `latchkey app-attest debug-token create --name <name>`: the secret it prints once (its only stdout line that
    /// is not a header), and the run.
    static func create(_ server: TestServer, name: String) async throws -> (secret: String, run: CLIRun) {
        let run = try await server.cli("app-attest", "debug-token", "create", "--name", name)
        #expect(run.exitCode == 0, "\(run)")
        let secret = try #require(run.stdoutLines.map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty }, "\(run)")
        return (secret, run)
    }

    /// The ID of the listed token named `name`, and the listing.
    static func listedID(_ server: TestServer, name: String) async throws -> (id: String?, run: CLIRun) {
        let run = try await server.cli("app-attest", "debug-token", "list")
        #expect(run.exitCode == 0, "\(run)")
        return (run.tableRows.first { $0.contains(name) }?.first, run)
    }

    static func debugEvidence(_ token: String) -> AppAttestEvidence { AppAttestEvidence(debugToken: token) }

    @Test func aDebugTokenAttestsWhenAllowedAndEveryUseIsAudited() async throws {
        let capture = LogCapture()
        try await Spec.with(policy: "guests", ["app-attest.allow-debug-tokens": true], logger: capture.logger()) { spec in
            let (secret, created) = try await Self.create(spec.server, name: "ci-simulator")
            #expect(!created.stderr.contains(secret), "the secret is printed once, on stdout")

            let registered = try await spec.register(UUID(), Self.debugEvidence(secret))
            #expect(registered.status == .created, "\(registered.text)")
            let pair = try registered.decode(TokenPairResponse.self)
            #expect(try Spec.attClaim(pair.accessToken) == true)
            #expect(try await spec.me(pair.accessToken).devices.map(\.attested) == [true])

            let guest = try await spec.guest(UUID(), evidence: Self.debugEvidence(secret))
            #expect(guest.status == .created, "\(guest.text)")
            #expect(try Spec.attClaim(try guest.decode(GuestSessionResponse.self).accessToken) == true)

            let uses = try await spec.server.services.audit.events(AuditQuery(action: Self.usedAction))
            #expect(uses.count == 2, "\(uses)")
            #expect(uses.allSatisfy { !"\($0)".contains(secret) }, "an audit entry holds the token")
            let audit = try await spec.server.cli("audit", "list")
            #expect(audit.stdout.contains(Self.usedAction), "\(audit)")
            #expect(!audit.stdout.contains(secret))

            let listed = try await Self.listedID(spec.server, name: "ci-simulator")
            #expect(listed.id != nil, "\(listed.run)")
            #expect(!listed.run.stdout.contains(secret) && !listed.run.stderr.contains(secret), "the listing shows the token")
        }
        #expect(!capture.lines.isEmpty)
    }

    /// A device ID attested by a debug token proves later guest requests by sending the token again (contract).
    @Test func aDebugTokenDeviceSendsItsTokenAgainForGuestTokens() async throws {
        try await Spec.with(policy: "guests", ["app-attest.allow-debug-tokens": true]) { spec in
            let (secret, _) = try await Self.create(spec.server, name: "simulator")
            let deviceID = UUID()
            #expect(try await spec.guest(deviceID, evidence: Self.debugEvidence(secret)).status == .created)
            let bare = try await spec.guest(deviceID)
            #expect(bare.status.code >= 400 && bare.status.code < 500, "\(bare.text)")
            let again = try await spec.guest(deviceID, evidence: Self.debugEvidence(secret))
            #expect(again.status == .created, "\(again.text)")
            #expect(try Spec.attClaim(try again.decode(GuestSessionResponse.self).accessToken) == true)
        }
    }

    @Test func debugTokensAreOffUnlessAllowed() async throws {
        try await Spec.with(policy: "guests") { spec in
            let (secret, _) = try await Self.create(spec.server, name: "not-allowed")
            let rows = try await spec.rows()
            let refused = try await spec.register(UUID(), Self.debugEvidence(secret))
            #expect(refused.status == .badRequest)
            #expect(refused.envelope?.error.code == .invalidAttestation, "\(refused.text)")
            #expect(!refused.text.contains(secret))
            let guest = try await spec.guest(UUID(), evidence: Self.debugEvidence(secret))
            #expect(guest.status.code >= 400 && guest.status.code < 500, "\(guest.text)")
            #expect(try await spec.rows() == rows)
            #expect(try await spec.server.services.audit.events(AuditQuery(action: Self.usedAction)).isEmpty)
        }
    }

    @Test func anUnknownOrRevokedDebugTokenIsRefused() async throws {
        try await Spec.with(policy: "guests", ["app-attest.allow-debug-tokens": true]) { spec in
            let (secret, _) = try await Self.create(spec.server, name: "to-revoke")
            let madeUp = String(secret.reversed())
            let unknown = try await spec.register(UUID(), Self.debugEvidence(madeUp))
            #expect(unknown.status == .badRequest)
            #expect(unknown.envelope?.error.code == .invalidAttestation, "\(unknown.text)")
            #expect(!unknown.text.contains(madeUp))

            let id = try #require(try await Self.listedID(spec.server, name: "to-revoke").id)
            let revoke = try await spec.server.cli("app-attest", "debug-token", "revoke", id)
            #expect(revoke.exitCode == 0, "\(revoke)")
            let rows = try await spec.rows()
            let revoked = try await spec.register(UUID(), Self.debugEvidence(secret))
            #expect(revoked.status == .badRequest)
            #expect(revoked.envelope?.error.code == .invalidAttestation, "\(revoked.text)")
            #expect(try await spec.rows() == rows)
        }
    }

    /// The token never shows in a log line, whatever happens to it (used, refused, revoked).
    @Test func theTokenIsNeverLogged() async throws {
        let capture = LogCapture()
        let secret = try await Spec.with(policy: "guests", ["app-attest.allow-debug-tokens": true], logger: capture.logger()) { spec in
            let (secret, _) = try await Self.create(spec.server, name: "logged")
            #expect(try await spec.register(UUID(), Self.debugEvidence(secret)).status == .created)
            #expect(try await spec.guest(UUID(), evidence: Self.debugEvidence(secret)).status == .created)
            _ = try await spec.register(UUID(), Self.debugEvidence(secret + "x"))
            let id = try #require(try await Self.listedID(spec.server, name: "logged").id)
            #expect(try await spec.server.cli("app-attest", "debug-token", "revoke", id).exitCode == 0)
            _ = try await spec.register(UUID(), Self.debugEvidence(secret))
            return secret
        }
        let lines = capture.lines.map(\.rendered)
        #expect(!lines.isEmpty)
        let leaked = lines.filter { $0.contains(secret) }
        #expect(leaked.isEmpty, "\(leaked)")
    }
}
