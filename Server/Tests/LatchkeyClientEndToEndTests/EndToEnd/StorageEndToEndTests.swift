import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyS3Peer
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
    static func configure(_ configuration: inout LatchkeyConfiguration) {
        FederationEndToEndTests.configure(&configuration)
        S3Peer.configure(&configuration)
    }

    /// Seed 001: Sign in with Apple → storage credentials → the app uploads to its own folder and is denied elsewhere;
    /// the SDK keeps the credentials and asks again 5 minutes before they expire, on the app's clock.
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
            let own = try await S3Peer.send(
                "PUT", key: "users/\(signedIn.userID)/photos/x.dat", body: photo, credentials: key, endpoint: vended.endpoint, bucket: vended.bucket)
            #expect(own.status == 200)
            let other = try await S3Peer.send(
                "PUT", key: "users/\(UUID().uuidString.lowercased())/photos/x.dat", body: photo, credentials: key, endpoint: vended.endpoint,
                bucket: vended.bucket)
            #expect(other.status == 403)

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
            #expect(try await S3Peer.plain(request).status == 200)
            await #expect(throws: LatchkeyError.self) { _ = try await session.presignedURL(key: "../escape", method: .get) }
        }
    }

    /// Seed 000: a device registered with `users/register` lists and downloads assets with its device ID only.
    @Test func storiDownloadsAssetsWithItsDeviceIDOnly() async throws {
        try await LiveServer.run(clock: ManualClock(start: Date()), configure: Self.configure) { server in
            let kit = "kits/\(UUID().uuidString)/"
            let uploaded = try await S3Peer.send("PUT", key: "assets/\(kit)909.sf2", body: Data("soundfont".utf8), credentials: S3Peer.admin)
            #expect(uploaded.status == 200)
            let app = AppInstall(server: server)
            let session = app.launch()
            #expect(try await session.registerUser())
            let listed = try await session.assets(prefix: kit)
            #expect(listed.assets.map(\.key) == ["\(kit)909.sf2"])
            let url = try await session.assetURL(key: "\(kit)909.sf2")
            let downloaded = try await S3Peer.plain(URLRequest(url: URL(string: url.url)!))
            #expect(downloaded.status == 200 && downloaded.body == Data("soundfont".utf8))
        }
    }
}
