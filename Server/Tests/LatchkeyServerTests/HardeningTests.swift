import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import LatchkeyAPI
import NIOCore
import NIOPosix
import Testing

// `@testable`: signing with the server's own key collection, as a token with a made-up kid would be.
@testable import LatchkeyServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The smaller hardening items: key files, caches, timeouts, metrics, key fetching and key revocation.
@Suite struct HardeningTests {
    // MARK: master key file

    @Test func theMasterKeyFileIsCreatedPrivate() async throws {
        let server = try await TestServer.make(backend: .sqlite) { $0.masterKey = nil }
        let path = server.databasePath + ".key"
        await server.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        try? FileManager.default.removeItem(at: server.directory)
    }

    @Test func aMasterKeyFileOthersCanReadIsRefusedAtStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("master.key")
        try (LatchkeyServices.newMasterKey() + "\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let error = await #expect(throws: (any Error).self) {
            _ = try await TestServer.make(directory: directory) { configuration in
                configuration.masterKey = nil
                configuration.masterKeyFile = file.path
            }
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("chmod 600"))
    }

    // MARK: responses

    @Test func everyTokenResponseSaysNoStore() async throws {
        try await withServer(.router) { client, _ in
            let registered = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            let pair = try registered.decode(TokenPairResponse.self)
            let refreshed = try await client.refresh(pair.refreshToken)
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
            for response in [registered, refreshed, guest] {
                #expect(response.headers[.cacheControl] == "no-store")
                #expect(response.headers[HTTPField.Name("Pragma")!] == "no-cache")
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func anIdleConnectionIsClosed() async throws {
        try await withServer(.live, configure: { $0.idleTimeout = 0.2 }) { client, _ in
            let port = try #require(client.port)
            // A raw connection that never sends a request: the server closes it after the idle timeout.
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            // A watchdog closes it from this side after 10 s, so a server that never does fails the test instead of hanging it.
            let watchdog = channel.eventLoop.scheduleTask(in: .seconds(10)) {
                channel.close(promise: nil)
                return true
            }
            try await channel.closeFuture.get()
            watchdog.cancel()
            let fired = (try? await watchdog.futureResult.get()) ?? false
            #expect(!fired, "the server kept a connection that never sent a request open for 10 s")
        }
    }

    // MARK: metrics

    @Test func metricsCanBeKeptBehindAToken() async throws {
        try await withServer(.router, configure: { $0.metricsToken = "metrics-secret-\(UUID().uuidString)" }) { client, server in
            expectUnauthorized(try await client.send(.get, "/metrics"))
            expectUnauthorized(try await client.send(.get, "/metrics", bearer: "wrong"))
            let allowed = try await client.send(.get, "/metrics", bearer: server.services.configuration.metricsToken)
            #expect(allowed.status == .ok)
            #expect(allowed.text.contains("latchkey_http_requests_total"))
        }
    }

    @Test(.timeLimit(.minutes(1))) func metricsCanBeServedOnAPortOfTheirOwn() async throws {
        let metricsPort = try Self.freePort()
        try await withServer(.live, configure: { ($0.metricsPort, $0.metricsToken) = (metricsPort, nil) }) { client, _ in
            #expect(try await client.send(.get, "/metrics").status == .notFound)  // the port alone serves it, with no token
            let url = URL(string: "http://127.0.0.1:\(metricsPort)/metrics")!
            var text = ""
            for _ in 0..<100 {  // the metrics listener starts beside the API's
                if let (data, _) = try? await URLSession.shared.data(from: url) {
                    text = String(decoding: data, as: UTF8.self)
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(text.contains("latchkey_http_requests_total"))
        }
    }

    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        return channel.localAddress?.port ?? 0
    }

    // MARK: signing keys

    @Test func aTokenNamingAKidWeDoNotPublishIsRefusedEvenWhenOurKeySignedIt() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let claims = try Forge.claims(of: device.accessToken)
            // jwt-kit verifies with its default key when it lacks the named kid: that must never happen.
            let token = try await server.services.keyRing.current.collection.sign(
                SignedClaims(claims), kid: JWKIdentifier(string: "made-up-kid"), header: ["typ": "at+jwt"])
            expectUnauthorized(try await client.validate(token))
        }
    }

    @Test func aTokenOfAnotherJWTTypeIsRefused() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let token = try await server.services.keyRing.sign(SignedClaims(try Forge.claims(of: device.accessToken)))
            #expect(try Forge.header(of: token).typ == "at+jwt")
            var jwt = try CompactJWT(token)
            jwt.header = Base64URL.encode(#"{"alg":"ES256","kid":"\#(try Forge.header(of: token).kid ?? "")","typ":"dpop+jwt"}"#)
            expectUnauthorized(try await client.validate(jwt.description))
        }
    }

    @Test(arguments: [false, true])
    func aRevokedKeysTokensStopAtOnceAndTheKeyLeavesTheJWKS(fromAnotherProcess: Bool) async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            try await expectAccepted(device.accessToken, by: client)  // cached
            let kid = try #require(try Forge.header(of: device.accessToken).kid)
            if fromAnotherProcess {
                // The CLI, say: another process on the same database; this server learns it from the feed.
                let other = try await TestServer.make(database: server.databasePath)
                #expect(try await other.services.revokeSigningKey(kid: kid))
                await other.close()
                try await server.services.revocations.poll()
            } else {
                #expect(try await server.services.revokeSigningKey(kid: kid))
            }
            try await expectRefused(device.accessToken, by: client)
            #expect(!(try await client.jwks()).keys.map(\.kid).contains(kid))
            // A fresh key signs from now on.
            let again = try await client.registerAgain(device)
            try await expectAccepted(again.accessToken, by: client)
            #expect(try Forge.header(of: again.accessToken).kid != kid)
            #expect(try await server.services.revokeSigningKey(kid: "no-such-kid") == false)
        }
    }

    // MARK: identity providers

    @Test func keysAreFetchedOverHTTPSOnlyButLoopback() async throws {
        await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.make { configuration in
                var provider = IdentityProviderConfiguration(
                    name: "clerk", issuer: "https://clerk.example.com", jwksURL: "http://clerk.example.com/jwks")
                provider.audiences = ["https://api.example.com"]
                configuration.identityProviders = [provider]
            }
        }
        #expect(LatchkeyServices.isSecureFetchURL("https://clerk.example.com/.well-known/jwks.json"))
        #expect(LatchkeyServices.isSecureFetchURL("http://127.0.0.1:8080/jwks"))
        #expect(LatchkeyServices.isSecureFetchURL("http://localhost/jwks"))
        #expect(!LatchkeyServices.isSecureFetchURL("http://10.0.0.1/jwks"))
        #expect(!LatchkeyServices.isSecureFetchURL("ftp://example.com/jwks"))
    }

    @Test func aProviderWithoutAudiencesIsRefusedAtStartUnlessItSaysAny() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-providers-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"providers": {"names": ["clerk"], "clerk": {"issuer": "https://clerk.example.com", "public-key": "x"}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let missing = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(missing.invalidProviders.first?.contains("audiences") == true)
        try #"{"providers": {"names": ["clerk"], "clerk": {"issuer": "https://clerk.example.com", "public-key": "x", "audiences": ["any"]}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let anyAlone = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(anyAlone.invalidProviders.first?.contains("authorized-parties") == true)  // any needs the azp to check
        try #"""
        {"providers": {"names": ["clerk"], "clerk": {"issuer": "https://clerk.example.com", "public-key": "x", "audiences": ["any"],
                                                      "authorized-parties": ["https://app.example.com"]}}}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let any = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(any.invalidProviders.isEmpty)
        #expect(any.identityProviders.first?.acceptsAnyAudience == true)
    }
}
