import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyS3Peer
import LatchkeyServer
import LatchkeySigV4
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Storage against a real S3 and STS server (SeaweedFS), which enforces the session policy Latchkey asks for: what
/// vended credentials and presigned URLs can and cannot reach, and the asset flow of seed 000.
@Suite(.enabled(if: S3Peer.isAvailable, S3Peer.skipReason))
struct StorageS3Tests {
    func credentials(_ client: any TestClientProtocol) async throws -> (user: String, credentials: AWSCredentials) {
        let device = try await client.registerDevice()
        let vended = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).decode(StorageCredentials.self)
        #expect(vended.prefix == "users/\(device.userID)/")
        return (
            device.userID, AWSCredentials(accessKeyID: vended.accessKeyID, secretAccessKey: vended.secretAccessKey, sessionToken: vended.sessionToken)
        )
    }

    @Test func vendedCredentialsReachTheUsersFolderAndNothingElse() async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date()), configure: S3Peer.configure)
        try await server.test(.live) { client in
            let (user, own) = try await self.credentials(client)
            let (other, _) = try await self.credentials(client)
            let photo = Data("photo bytes".utf8)
            #expect(try await S3Peer.send("PUT", key: "users/\(user)/photos/x.dat", body: photo, credentials: own).status == 200)
            let read = try await S3Peer.send("GET", key: "users/\(user)/photos/x.dat", credentials: own)
            #expect(read.status == 200 && read.body == photo)
            let listed = try await S3Peer.send(
                "GET", key: nil, query: [URLQueryItem(name: "list-type", value: "2"), URLQueryItem(name: "prefix", value: "users/\(user)/")],
                credentials: own)
            #expect(listed.status == 200 && String(decoding: listed.body, as: UTF8.self).contains("photos/x.dat"))
            // Another user's folder, a folder that merely starts with this user's ID, the whole bucket: AccessDenied.
            #expect(try await S3Peer.send("PUT", key: "users/\(other)/photos/x.dat", body: photo, credentials: own).status == 403)
            #expect(try await S3Peer.send("PUT", key: "users/\(user)b/photos/x.dat", body: photo, credentials: own).status == 403)
            #expect(try await S3Peer.send("GET", key: "assets/x", credentials: own).status == 403)
            let everything = try await S3Peer.send("GET", key: nil, query: [URLQueryItem(name: "list-type", value: "2")], credentials: own)
            #expect(everything.status == 403)
            #expect(try await S3Peer.send("DELETE", key: "users/\(user)/photos/x.dat", credentials: own).status == 204)
        }
    }

    @Test func presignedURLsWorkWithPlainHTTPUntilTheyExpireAndNotWhenTampered() async throws {
        let clock = ManualClock(start: Date())
        let server = try await TestServer.make(clock: clock, configure: S3Peer.configure)
        try await server.test(.live) { client in
            let device = try await client.registerDevice()
            func presign(_ method: PresignMethod, _ key: String, _ type: String? = nil) async throws -> PresignedURL {
                try await client.send(
                    .post, "/api/v1/storage/presign", bearer: device.accessToken, body: PresignRequest(method: method, key: key, contentType: type)
                ).decode(PresignedURL.self)
            }
            let put = try await presign(.put, "photos/p.jpg", "image/jpeg")
            var upload = URLRequest(url: URL(string: put.url)!)
            upload.httpMethod = "PUT"
            upload.httpBody = Data("jpeg".utf8)
            for (name, value) in put.headers { upload.setValue(value, forHTTPHeaderField: name) }
            #expect(try await S3Peer.plain(upload).status == 200)
            var wrongType = upload
            wrongType.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            #expect(try await S3Peer.plain(wrongType).status == 403)

            let get = try await presign(.get, "photos/p.jpg")
            let downloaded = try await S3Peer.plain(URLRequest(url: URL(string: get.url)!))
            #expect(downloaded.status == 200 && downloaded.body == Data("jpeg".utf8))
            let tampered = get.url.replacingOccurrences(of: "X-Amz-Signature=", with: "X-Amz-Signature=0")
            #expect(try await S3Peer.plain(URLRequest(url: URL(string: tampered)!)).status == 403)
            let otherKey = get.url.replacingOccurrences(of: "photos/p.jpg", with: "photos/q.jpg")
            #expect(try await S3Peer.plain(URLRequest(url: URL(string: otherKey)!)).status == 403)

            // Signed an hour ago for 300 seconds: expired for the store.
            clock.advance(by: -3600)
            let expired = try await presign(.get, "photos/p.jpg")
            #expect(try await S3Peer.plain(URLRequest(url: URL(string: expired.url)!)).status == 403)
        }
    }

    @Test func seed000AssetsAreListedAndDownloadedWithTheDeviceIDOnly() async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date()), configure: S3Peer.configure)
        try await server.test(.live) { client in
            let kit = "kits/\(UUID().uuidString)/"
            for (name, bytes) in [("kick.wav", "kick"), ("snare.wav", "snare")] {
                #expect(try await S3Peer.send("PUT", key: "assets/\(kit)\(name)", body: Data(bytes.utf8), credentials: S3Peer.admin).status == 200)
            }
            let deviceID = UUID().uuidString.lowercased()
            #expect(try await client.send(.post, "/api/v1/users/register", json: #"{"user_id": "\#(deviceID)"}"#).status == .created)
            let device: HTTPFields = [HTTPField.Name("X-Device-ID")!: deviceID]
            let listed = try await client.send(.get, "/api/v1/assets?prefix=\(kit)", headers: device).decode(AssetList.self)
            #expect(listed.assets.map(\.key).sorted() == ["\(kit)kick.wav", "\(kit)snare.wav"])
            #expect(listed.assets.first { $0.key.hasSuffix("snare.wav") }?.size == 5)
            #expect(listed.nextCursor == nil)
            let url = try await client.send(.get, "/api/v1/assets/url?key=\(kit)snare.wav", headers: device).decode(PresignedURL.self)
            let downloaded = try await S3Peer.plain(URLRequest(url: URL(string: url.url)!))
            #expect(downloaded.status == 200 && downloaded.body == Data("snare".utf8))
            #expect(try await client.send(.get, "/api/v1/assets?prefix=../users/", headers: device).status == .badRequest)
        }
    }

    @Test func aRoleSTSRefusesIs502NamingSTSsCode() async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date())) { configuration in
            S3Peer.configure(&configuration)
            configuration.storage.roleARN = "arn:aws:iam::000000000000:role/NoSuchRole"
        }
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken)
            #expect(response.status == .badGateway)
            #expect(response.envelope?.error.message.contains("AccessDenied") == true)
        }
    }
}
