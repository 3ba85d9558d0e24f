import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeySigV4
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's storage calls against a live server whose Apple is `Tests/interop/idp_peer.py` and whose S3 and STS are
/// SeaweedFS (both started by `scripts/test`): seed 001 (Photolala) and seed 000's assets (Stori).
@Suite(
    .enabled(
        if: !(ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"] ?? "").isEmpty
            && !(ProcessInfo.processInfo.environment["LATCHKEY_TEST_S3_ENDPOINT"] ?? "").isEmpty,
        "LATCHKEY_TEST_IDP_URL or LATCHKEY_TEST_S3_ENDPOINT is not set (scripts/test starts the Apple peer and SeaweedFS)"))
struct StorageEndToEndTests {
    @available(LatchkeyServer 1.0, *)
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @available(LatchkeyServer 1.0, *)
    static func configure(_ configuration: inout LatchkeyConfiguration) {
        FederationEndToEndTests.configure(&configuration)
        let environment = Self.environment
        configuration.storage.bucket = environment["LATCHKEY_TEST_S3_BUCKET"] ?? "latchkey-test"
        configuration.storage.region = environment["LATCHKEY_TEST_S3_REGION"] ?? "us-east-1"
        configuration.storage.endpoint = environment["LATCHKEY_TEST_S3_ENDPOINT"]
        configuration.storage.stsEndpoint = environment["LATCHKEY_TEST_S3_ENDPOINT"]
        configuration.storage.accessKeyID = environment["LATCHKEY_TEST_S3_ACCESS_KEY_ID"]
        configuration.storage.secretAccessKey = environment["LATCHKEY_TEST_S3_SECRET_ACCESS_KEY"]
        configuration.storage.roleARN = environment["LATCHKEY_TEST_S3_ROLE_ARN"]
        configuration.storage.assetsPrefix = "assets/"
    }

    /// A SigV4-signed S3 request, as the AWS SDK would send it with `credentials`; the status and body.
    @available(LatchkeyServer 1.0, *)
    static func s3(
        _ method: String, _ key: String, body: Data = Data(), credentials: AWSCredentials, endpoint: String, bucket: String
    )
        async throws -> (Int, Data)
    {
        var components = try #require(URLComponents(string: endpoint))
        components.path = "/\(bucket)/\(key)"
        let signed = try SigV4Signer(region: "us-east-1", service: "s3", credentials: credentials)
            .sign(method: method, url: components, payload: .data(body), date: Date())
        var request = URLRequest(url: signed.url)
        request.httpMethod = method
        for (name, value) in signed.headers { request.setValue(value, forHTTPHeaderField: name) }
        if !body.isEmpty { request.httpBody = body }
        return try await Self.plain(request)
    }

    @available(LatchkeyServer 1.0, *)
    static func plain(_ request: URLRequest) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// Seed 001: Sign in with Apple → storage credentials → the app uploads to its own folder and is denied elsewhere;
    /// the SDK keeps the credentials and asks again 5 minutes before they expire, on the app's clock.
    @available(LatchkeyServer 1.0, *)
    @Test func photolalaUploadsToItsOwnFolderWithVendedCredentials() async throws {
        try await LiveServer.run(clock: ManualClock(start: Date()), configure: Self.configure) { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            let nonce = AppleNonce.random()
            let signedIn = try await session.signInWithApple(
                identityToken: try await FederationEndToEndTests.appleToken(subject: "001.\(UUID().uuidString)", nonce: nonce, server: server),
                rawNonce: nonce.raw)
            let vended = try await session.storageCredentials()
            #expect(vended.prefix == "users/\(signedIn.userID)/")
            let key = AWSCredentials(accessKeyID: vended.accessKeyID, secretAccessKey: vended.secretAccessKey, sessionToken: vended.sessionToken)
            let photo = Data("photo".utf8)
            let own = try await Self.s3(
                "PUT", "users/\(signedIn.userID)/photos/x.dat", body: photo, credentials: key, endpoint: vended.endpoint, bucket: vended.bucket)
            #expect(own.0 == 200)
            let other = try await Self.s3(
                "PUT", "users/\(UUID().uuidString.lowercased())/photos/x.dat", body: photo, credentials: key, endpoint: vended.endpoint,
                bucket: vended.bucket)
            #expect(other.0 == 403)

            let path = "/api/v1/storage/credentials"
            #expect(try await session.storageCredentials().accessKeyID == vended.accessKeyID)
            #expect(app.transport.count(path) == 1)
            let untilRefresh = vended.expiration.timeIntervalSince(app.clock.now()) - 300
            app.clock.advance(by: untilRefresh - 1)
            _ = try await session.storageCredentials()
            #expect(app.transport.count(path) == 1)
            app.clock.advance(by: 2)
            _ = try await session.storageCredentials()
            #expect(app.transport.count(path) == 2)

            // Without an S3 SDK: a presigned URL and URLSession.
            let upload = try await session.presignedURL(key: "photos/y.jpg", method: .put, contentType: "image/jpeg")
            var request = URLRequest(url: URL(string: upload.url)!)
            request.httpMethod = "PUT"
            request.httpBody = photo
            for (name, value) in upload.headers { request.setValue(value, forHTTPHeaderField: name) }
            #expect(try await Self.plain(request).0 == 200)
            await #expect(throws: LatchkeyError.self) { _ = try await session.presignedURL(key: "../escape", method: .get) }
        }
    }

    /// Seed 000: a device registered with `users/register` lists and downloads assets with its device ID only.
    @available(LatchkeyServer 1.0, *)
    @Test func storiDownloadsAssetsWithItsDeviceIDOnly() async throws {
        try await LiveServer.run(clock: ManualClock(start: Date()), configure: Self.configure) { server in
            let environment = Self.environment
            let admin = AWSCredentials(
                accessKeyID: environment["LATCHKEY_TEST_S3_ACCESS_KEY_ID"] ?? "",
                secretAccessKey: environment["LATCHKEY_TEST_S3_SECRET_ACCESS_KEY"] ?? "")
            let kit = "kits/\(UUID().uuidString)/"
            let uploaded = try await Self.s3(
                "PUT", "assets/\(kit)909.sf2", body: Data("soundfont".utf8), credentials: admin,
                endpoint: environment["LATCHKEY_TEST_S3_ENDPOINT"] ?? "",
                bucket: environment["LATCHKEY_TEST_S3_BUCKET"] ?? "latchkey-test")
            #expect(uploaded.0 == 200)
            let app = AppInstall(server: server)
            let session = app.launch()
            #expect(try await session.registerUser())
            let listed = try await session.assets(prefix: kit)
            #expect(listed.assets.map(\.key) == ["\(kit)909.sf2"])
            let url = try await session.assetURL(key: "\(kit)909.sf2")
            let downloaded = try await Self.plain(URLRequest(url: URL(string: url.url)!))
            #expect(downloaded.0 == 200 && downloaded.1 == Data("soundfont".utf8))
        }
    }
}
