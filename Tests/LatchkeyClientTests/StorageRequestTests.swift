import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Presigned URLs (Bearer) and assets (`X-Device-ID` only): what each request carries, and how answers map to errors.
@Suite struct StorageRequestTests {
    static let expiresAt = Date(timeIntervalSince1970: 1_800_000_300)

    static let presigned = PresignedURL(
        url: "https://s3.us-east-1.amazonaws.com/photos/users/user/a.jpg?X-Amz-Signature=abc", method: .put,
        headers: ["Content-Type": "image/jpeg"], expiresAt: expiresAt)

    /// A signed-in session (so there is a bearer that asset requests must not carry) over `handler`.
    func signedIn(_ handler: @escaping StubTransport.Handler) throws -> (Fixture, LatchkeySession, UUID) {
        let fixture = Fixture(handler)
        let deviceID = try fixture.storeSession()
        return (fixture, fixture.session(), deviceID)
    }

    @Test func presignedURLPostsTheKeyMethodAndContentTypeWithTheBearer() async throws {
        let (fixture, session, _) = try self.signedIn { _ in .json(200, Self.presigned) }
        let url = try await session.presignedURL(key: "a.jpg", method: .put, contentType: "image/jpeg")
        #expect(url == Self.presigned)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.path == "/api/v1/storage/presign")
        #expect(sent.bearer == "access-1")
        #expect(sent.header("X-Device-ID") == nil)
        #expect(try sent.decodeBody(PresignRequest.self) == PresignRequest(method: .put, key: "a.jpg", contentType: "image/jpeg"))
    }

    @Test func signedOutNoPresignRequestIsSent() async throws {
        let fixture = Fixture()
        await #expect(throws: LatchkeyError.notSignedIn) { try await fixture.session().presignedURL(key: "a.jpg", method: .get) }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func assetsCarryTheDeviceIDAndNoAuthorization() async throws {
        let page = AssetList(
            assets: [Asset(key: "kits/909.zip", size: 2048, lastModified: Date(timeIntervalSince1970: 1_800_000_000), etag: "e1")], nextCursor: "c2")
        let (fixture, session, deviceID) = try self.signedIn { _ in .json(200, page) }
        #expect(try await session.assets(prefix: "kits/", cursor: "c1") == page)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.url.path == "/api/v1/assets")
        #expect(sent.url.query == "prefix=kits/&cursor=c1")
        #expect(sent.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(sent.header("Authorization") == nil)
    }

    @Test func assetsNeedNoSession() async throws {
        let fixture = Fixture { _ in .json(200, AssetList(assets: [], nextCursor: nil)) }
        let session = fixture.session()
        #expect(try await session.assets() == AssetList(assets: [], nextCursor: nil))
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.query == nil)
        #expect(sent.header("X-Device-ID") == (try await session.deviceID()).uuidString.lowercased())
        #expect(sent.header("Authorization") == nil)
    }

    @Test func assetURLCarriesTheKeyAndTheDeviceIDAndNoAuthorization() async throws {
        let download = PresignedURL(
            url: "https://s3.example.test/assets/kits/909.zip?X-Amz-Signature=abc", method: .get, headers: [:], expiresAt: Self.expiresAt)
        let (fixture, session, deviceID) = try self.signedIn { _ in .json(200, download) }
        #expect(try await session.assetURL(key: "kits/909.zip") == download)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.url.path == "/api/v1/assets/url")
        #expect(sent.url.query == "key=kits/909.zip")
        #expect(sent.header("X-Device-ID") == deviceID.uuidString.lowercased())
        #expect(sent.header("Authorization") == nil)
    }

    /// Errors are told apart by the envelope's code alone; the message is carried, never matched.
    @Test(arguments: [
        (TransportResponse.error(401, .unknownDevice, "invalid_key"), LatchkeyError.refusal(401, .unknownDevice, "invalid_key")),
        (.error(400, .invalidKey, "unknown_device"), .refusal(400, .invalidKey, "unknown_device")),
        (.error(404, .notFound, "invalid_key"), .refusal(404, .storageNotConfigured, "This server offers no storage.")),
        (.error(401, .invalidToken, "unknown_device"), .refusal(401, .invalidToken, "unknown_device")),
        (.error(400, .invalidRequest, "invalid_key"), .refusal(400, .invalidRequest, "invalid_key")),
        (
            .error(404, ErrorCode(rawValue: "no_such_thing"), "not_found"),
            .refusal(404, ErrorCode(rawValue: "no_such_thing"), "not_found")
        ),
        (TransportResponse(status: 404, body: Data("not_found".utf8)), .refusal(404, nil, "HTTP 404")),
    ])
    func anAssetAnswerIsMappedByItsCode(answer: TransportResponse, error: LatchkeyError) async throws {
        let (fixture, session, _) = try self.signedIn { _ in answer }
        await #expect(throws: error) { try await session.assets() }
        #expect(fixture.transport.requests.count == 1)  // a 401 on the device-ID policy is no reason to refresh…
        #expect(try fixture.store.load()?.session?.accessToken == "access-1")  // …nor to end the session
    }

    @Test func aRefusedKeyAndAServerWithoutStorageAreTheirOwnErrorsForPresignedURLsToo() async throws {
        let (_, refusing, _) = try self.signedIn { _ in .error(400, .invalidKey, "key contains a . or .. segment.") }
        await #expect(throws: LatchkeyError.refusal(400, .invalidKey, "key contains a . or .. segment.")) {
            try await refusing.presignedURL(key: "../x", method: .get)
        }
        let (_, unconfigured, _) = try self.signedIn { _ in .error(404, .notFound) }
        #expect(await thrownCode { try await unconfigured.presignedURL(key: "a", method: .get) } == .storageNotConfigured)
        #expect(await thrownCode { try await unconfigured.storageCredentials() } == .storageNotConfigured)
    }

    @Test func pastThePerDeviceLimitAssetsAreRateLimited() async throws {
        let (_, session, _) = try self.signedIn { _ in
            .error(429, .rateLimited, headers: ["X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"])
        }
        let expected = RateLimitInfo(limit: 300, remaining: 0, reset: Date(timeIntervalSince1970: 1_800_000_060))
        await #expect(throws: LatchkeyError.rateLimited(expected)) { try await session.assets(prefix: "kits/") }
    }
}
