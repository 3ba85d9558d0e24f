import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Storage credentials and presigned URLs against a fake STS on a real socket (STS's wire format, no AWS account):
/// what is asked of STS, caching, single flight, refusals; and the asset routes' device checks.
struct StorageTests {
    /// A server with storage on against a fake STS (and its clock).
    func withStorage(
        _ transport: Transport = .router, configure: @escaping @Sendable (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, TestServer, FakeSTS) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        let sts = FakeSTS(clock: clock)
        try await sts.run { url in
            let server = try await TestServer.make(clock: clock) { configuration in
                configuration.useStorage(sts: url)
                configure(&configuration)
            }
            try await server.test(transport) { client in try await body(client, server, sts) }
        }
    }

    @Test func credentialsReachOnlyTheUsersFolderAndAreAskedOfSTSOnce() async throws {
        try await withStorage { client, server, sts in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            let credentials = try response.decode(StorageCredentials.self)
            #expect(credentials.prefix == "users/\(device.userID)/")
            #expect(credentials.bucket == "photos" && credentials.region == "us-east-1" && credentials.endpoint == "http://127.0.0.1:9")
            #expect(credentials.accessKeyID == "ASIAFAKE1" && credentials.expiresIn == 3600)
            #expect(credentials.expiration == server.clock.now().addingTimeInterval(3600))

            let call = try #require(sts.calls.first)
            #expect(call["Action"] == "AssumeRole" && call["Version"] == "2011-06-15")
            #expect(call["RoleArn"] == "arn:aws:iam::000000000000:role/LatchkeyUserRole")
            #expect(call["DurationSeconds"] == "3600")
            #expect(call["RoleSessionName"] == "lk-\(device.userID)")
            #expect(call["authorization"]?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIALATCHKEYTEST/") == true)
            let policy = try JSONSerialization.jsonObject(with: Data(try #require(call["Policy"]).utf8)) as? [String: Any]
            let statements = policy?["Statement"] as? [[String: Any]] ?? []
            #expect(statements.count == 2)
            #expect(statements.first?["Resource"] as? [String] == ["arn:aws:s3:::photos/users/\(device.userID)/*"])
            #expect(statements.first?["Action"] as? [String] == StorageConfiguration.defaultActions)
            #expect(statements.last?["Action"] as? [String] == ["s3:ListBucket"])
            #expect(statements.last?["Resource"] as? [String] == ["arn:aws:s3:::photos"])
            let condition = statements.last?["Condition"] as? [String: [String: [String]]]
            #expect(condition == ["StringLike": ["s3:prefix": ["users/\(device.userID)/*"]]])

            let again = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).decode(StorageCredentials.self)
            #expect(again.accessKeyID == "ASIAFAKE1")
            #expect(sts.calls.count == 1)
        }
    }

    @Test func aThousandLaunchesAreOneSTSCall() async throws {
        try await withStorage(.live) { client, _, sts in
            let device = try await client.registerDevice()
            let keys = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).decode(StorageCredentials.self)
                            .accessKeyID
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(keys == ["ASIAFAKE1"])
            #expect(sts.calls.count == 1)
        }
    }

    @Test func credentialsAreFetchedAgainTenMinutesBeforeTheyExpire() async throws {
        try await withStorage { client, server, sts in
            let device = try await client.registerDevice()
            func key() async throws -> String {
                try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).decode(StorageCredentials.self).accessKeyID
            }
            #expect(try await key() == "ASIAFAKE1")
            server.clock.advance(by: 3600 - 600 - 1)
            let session = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let cached = try await client.send(.post, "/api/v1/storage/credentials", bearer: session.accessToken).decode(StorageCredentials.self)
            #expect(cached.accessKeyID == "ASIAFAKE1" && cached.expiresIn == 601)
            server.clock.advance(by: 2)
            let renewed = try await client.send(.post, "/api/v1/storage/credentials", bearer: session.accessToken).decode(StorageCredentials.self)
            #expect(renewed.accessKeyID == "ASIAFAKE2" && renewed.expiresIn == 3600)
            #expect(sts.calls.count == 2)
        }
    }

    @Test func aGlobalLogoutOrDeletingTheAccountForgetsTheUsersCredentials() async throws {
        try await withStorage { client, server, _ in
            let first = try await client.registerDevice()
            _ = try await client.send(.post, "/api/v1/storage/credentials", bearer: first.accessToken)
            let second = try await client.registerDevice()
            _ = try await client.send(.post, "/api/v1/storage/credentials", bearer: second.accessToken)
            #expect(server.services.storage.cache.count == 2)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: first.accessToken, json: #"{"scope": "global"}"#).status == .ok)
            #expect(server.services.storage.cache.count == 1)
            _ = try await server.services.users.delete(userID: second.userID)
            #expect(server.services.storage.cache.count == 0)
        }
    }

    @Test func anSTSRefusalIs502NamingItsCodeAndIsNotKept() async throws {
        try await withStorage { client, _, sts in
            let device = try await client.registerDevice()
            sts.answer(.refuse(status: 403, code: "AccessDenied"))
            let refused = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken)
            #expect(refused.status == .badGateway)
            #expect(refused.envelope?.error.code == .upstreamError)
            #expect(refused.envelope?.error.message.contains("AccessDenied") == true)
            sts.answer(.notXML)
            #expect(try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).status == .badGateway)
            sts.answer(.succeed)
            #expect(try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken).status == .ok)
            #expect(sts.calls.count == 3)
        }
    }

    @Test func anUnreachableSTSIs502() async throws {
        let server = try await TestServer.make { $0.useStorage(sts: "http://127.0.0.1:1") }
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken)
            #expect(response.status == .badGateway)
            #expect(response.envelope?.error.code == .upstreamError)
            #expect(response.envelope?.error.message.contains("storage.timeout") == true)
        }
    }

    @Test func guestsGetNoStorage() async throws {
        try await withStorage { client, _, sts in
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
                .decode(GuestSessionResponse.self)
            let credentials = try await client.send(.post, "/api/v1/storage/credentials", bearer: guest.accessToken)
            #expect(credentials.status == .forbidden)
            let presign = try await client.send(
                .post, "/api/v1/storage/presign", bearer: guest.accessToken, body: PresignRequest(method: .get, key: "a.jpg"))
            #expect(presign.status == .forbidden)
            #expect(try await client.send(.post, "/api/v1/storage/credentials").status == .unauthorized)
            #expect(sts.calls.isEmpty)
        }
    }

    @Test func withoutABucketTheStorageRoutesAre404SayingHowToTurnThemOn() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            for response in [
                try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken),
                try await client.send(.post, "/api/v1/storage/presign", bearer: device.accessToken, body: PresignRequest(method: .get, key: "a")),
                try await client.send(.get, "/api/v1/assets", headers: [HTTPField.Name("X-Device-ID")!: device.userID]),
            ] {
                #expect(response.status == .notFound)
                #expect(response.envelope?.error.message.contains("storage.bucket") == true)
            }
        }
    }

    @Test func aPresignedURLIsForTheUsersFolderAndLivesPresignLifetime() async throws {
        try await withStorage { client, server, sts in
            let device = try await client.registerDevice()
            let put = try await client.send(
                .post, "/api/v1/storage/presign", bearer: device.accessToken,
                body: PresignRequest(method: .put, key: "photos/2026/a b+c~.jpg", contentType: "image/jpeg"))
            #expect(put.status == .ok)
            let signed = try put.decode(PresignedURL.self)
            #expect(signed.method == .put && signed.headers == ["Content-Type": "image/jpeg"])
            #expect(signed.expiresAt == server.clock.now().addingTimeInterval(300))
            let url = try #require(URLComponents(string: signed.url))
            #expect(url.percentEncodedPath == "/photos/users/\(device.userID)/photos/2026/a%20b%2Bc~.jpg")
            let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(query["X-Amz-Expires"] == "300" && query["X-Amz-SignedHeaders"] == "content-type;host")
            #expect(query["X-Amz-Signature"]?.count == 64)
            let get = try await client.send(
                .post, "/api/v1/storage/presign", bearer: device.accessToken, body: PresignRequest(method: .get, key: "x", contentType: "a/b"))
            #expect(get.status == .badRequest)
            #expect(sts.calls.isEmpty)  // presigning asks nobody
        }
    }

    /// The signed headers and `X-Amz-SignedHeaders` of a presigned PUT of `contentType` (nil: none named).
    static func presignPut(
        _ client: some TestClientProtocol, _ token: String, _ contentType: String?
    ) async throws -> (status: HTTPResponse.Status, headers: [String: String], signed: String?, response: TestResponse) {
        let response = try await client.send(
            .post, "/api/v1/storage/presign", bearer: token, body: PresignRequest(method: .put, key: "uploads/a", contentType: contentType))
        guard response.status == .ok else { return (response.status, [:], nil, response) }
        let presigned = try response.decode(PresignedURL.self)
        let query = URLComponents(string: presigned.url)?.queryItems ?? []
        return (response.status, presigned.headers, query.first { $0.name == "X-Amz-SignedHeaders" }?.value, response)
    }

    @Test func aPresignedPutIsAlwaysSignedWithAnAllowedContentType() async throws {
        try await withStorage { client, _, _ in
            let token = try await client.registerDevice().accessToken
            for allowed in ["image/png", "audio/mpeg", "video/mp4", "application/json", "application/zip", "Image/PNG; name=a"] {
                let put = try await Self.presignPut(client, token, allowed)
                #expect(put.status == .ok && put.headers == ["Content-Type": allowed], "\(allowed)")
                #expect(put.signed == "content-type;host")
            }
            // Without content_type the upload is still signed with one: it cannot choose its own.
            let unnamed = try await Self.presignPut(client, token, nil)
            #expect(unnamed.headers == ["Content-Type": "application/octet-stream"] && unnamed.signed == "content-type;host")
        }
    }

    @Test(arguments: [
        "text/html", "TEXT/HTML; charset=utf-8", "text/html;charset=UTF-8", " text/html ", "application/xhtml+xml",
        "Application/XHTML+XML; q=1", "text/plain", "application/javascript", "text/xml", "html", "text/", "",
    ])
    func aContentTypeNotAllowedIs400AndNothingIsSigned(contentType: String) async throws {
        try await withStorage { client, _, _ in
            let put = try await Self.presignPut(client, try await client.registerDevice().accessToken, contentType)
            #expect(put.status == .badRequest)
            #expect(put.response.envelope?.error.code == .invalidRequest)
            #expect(!put.response.text.contains("X-Amz-Signature"))
        }
    }

    @Test func anActiveDocumentTypeIsNeverServedInlineEvenWhenAllowed() async throws {
        try await withStorage(configure: { $0.storage.allowedContentTypes = ["text/*", "image/*"] }) { client, _, _ in
            let token = try await client.registerDevice().accessToken
            for active in ["TEXT/HTML; charset=utf-8", "text/html", "image/svg+xml", "text/xml"] {
                let put = try await Self.presignPut(client, token, active)
                #expect(put.status == .ok, "\(active)")
                #expect(put.headers == ["Content-Type": active, "Content-Disposition": "attachment"], "\(active)")
                #expect(put.signed == "content-disposition;content-type;host")
            }
            let plain = try await Self.presignPut(client, token, "text/plain")
            #expect(plain.headers == ["Content-Type": "text/plain"] && plain.signed == "content-type;host")
            #expect(try await Self.presignPut(client, token, "application/xhtml+xml").status == .badRequest)
        }
    }

    static let keysThatLeaveTheFolder = [
        "../other/a.jpg", "a/../../b", "./a", "a/./b", "/abs", "a\\..\\b", "a%2e%2e/b", "%2E%2E", "a%2fb", "a%5Cb", "", "a//b", "a/",
        "a\u{0}b", "a\nb", "a\u{7f}b", "a\u{200b}b", String(repeating: "k", count: 1025),
    ]

    @Test(arguments: keysThatLeaveTheFolder)
    func aKeyThatCouldLeaveTheFolderIs400AndNothingIsSigned(key: String) async throws {
        try await withStorage { client, _, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(
                .post, "/api/v1/storage/presign", bearer: device.accessToken, body: PresignRequest(method: .put, key: key))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidKey)
            #expect(!response.text.contains("X-Amz-Signature"))
            let asset = try await client.send(
                .get, "/api/v1/assets/url?key=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                headers: [HTTPField.Name("X-Device-ID")!: device.userID])
            #expect(asset.status == .badRequest)
        }
    }

    @Test func assetsTakeAKnownDeviceIDOnlyAndAreLimitedPerDevice() async throws {
        try await withStorage(configure: { $0.limits.assets.limit = 2 }) { client, _, _ in
            let deviceID = UUID().uuidString.lowercased()
            #expect(try await client.send(.post, "/api/v1/users/register", json: #"{"user_id": "\#(deviceID)"}"#).status == .created)
            let known: HTTPFields = [HTTPField.Name("X-Device-ID")!: deviceID]
            let unknown = try await client.send(
                .get, "/api/v1/assets/url?key=kits/a.sf2", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
            #expect(unknown.status == .unauthorized && unknown.envelope?.error.code == .unknownDevice)
            #expect(try await client.send(.get, "/api/v1/assets/url?key=kits/a.sf2").status == .badRequest)
            // A bearer is neither needed nor read: a forged one changes nothing.
            var withJunkBearer = known
            withJunkBearer[.authorization] = "Bearer not-a-token"
            let first = try await client.send(.get, "/api/v1/assets/url?key=kits/a.sf2", headers: withJunkBearer)
            #expect(first.status == .ok && first.headers[HTTPField.Name("X-RateLimit-Remaining")!] == "1")
            let url = try first.decode(PresignedURL.self)
            #expect(url.method == .get && url.url.contains("/photos/assets/kits/a.sf2?"))
            #expect(try await client.send(.get, "/api/v1/assets/url?key=kits/b.sf2", headers: known).status == .ok)
            let over = try await client.send(.get, "/api/v1/assets/url?key=kits/a.sf2", headers: known)
            #expect(over.status == .tooManyRequests && over.headers[.retryAfter] != nil)
            let other = try await client.registerDevice()
            #expect(
                try await client.send(.get, "/api/v1/assets/url?key=kits/a.sf2", headers: [HTTPField.Name("X-Device-ID")!: other.userID]).status
                    == .ok)
        }
    }

    @Test func noSecretTokenOrSignatureReachesALogLine() async throws {
        let capture = LogCapture()
        let clock = ManualClock()
        let sts = FakeSTS(clock: clock)
        try await sts.run { url in
            let server = try await TestServer.make(clock: clock, logger: capture.logger()) { $0.useStorage(sts: url) }
            try await server.test(.live) { client in
                let device = try await client.registerDevice()
                let credentials = try await client.send(.post, "/api/v1/storage/credentials", bearer: device.accessToken)
                    .decode(StorageCredentials.self)
                let presigned = try await client.send(
                    .post, "/api/v1/storage/presign", bearer: device.accessToken, body: PresignRequest(method: .get, key: "a.jpg")
                ).decode(PresignedURL.self)
                let signature = try #require(URLComponents(string: presigned.url)?.queryItems?.first { $0.name == "X-Amz-Signature" }?.value)
                sts.answer(.refuse(status: 403, code: "AccessDenied"))
                _ = try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken, json: #"{"scope": "global"}"#)
                for text in [String(describing: credentials), String(describing: presigned), String(reflecting: credentials)] {
                    #expect(!text.contains(FakeSTS.marker) && !text.contains(signature))
                }
                #expect(!capture.lines.isEmpty)
                for line in capture.lines.map(\.rendered) {
                    #expect(!line.contains(FakeSTS.marker), "\(line)")
                    #expect(!line.contains(signature), "\(line)")
                }
            }
        }
    }
}

/// A storage configuration that cannot work is refused at start, saying which setting, never quoting the secret.
struct StorageConfigurationTests {
    static let broken: [(String, @Sendable (inout StorageConfiguration) -> Void)] = [
        ("storage.duration", { $0.duration = 899 }), ("storage.duration", { $0.duration = 43_201 }),
        ("storage.role-arn", { $0.roleARN = nil }), ("storage.secret-access-key", { $0.secretAccessKey = "" }),
        ("storage.user-prefix", { $0.userPrefix = "users/" }), ("storage.user-prefix", { $0.userPrefix = "users/{user_id}" }),
        ("storage.assets-prefix", { $0.assetsPrefix = "/assets/" }), ("storage.actions", { $0.actions = ["GetObject"] }),
        ("storage.presign-lifetime", { $0.presignLifetime = 604_801 }), ("storage.endpoint", { $0.endpoint = "ftp://x" }),
        ("storage.timeout", { $0.timeout = 0 }), ("storage.allowed-content-types", { $0.allowedContentTypes = ["html"] }),
        ("storage.allowed-content-types", { $0.allowedContentTypes = ["text/html; charset=utf-8"] }),
        ("storage.allowed-content-types", { $0.allowedContentTypes = [] }),
        ("session policy over STS's 2048 characters", { $0.actions = (0..<200).map { "s3:Action\($0)" } }),
    ]

    @Test(arguments: 0..<15)
    func aSettingThatCannotWorkIsRefusedAtStart(index: Int) async throws {
        let (key, breakIt) = Self.broken[index]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-storage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = await #expect(throws: LatchkeyServices.ConfigurationError.self) {
            _ = try await TestServer.make(directory: directory) { configuration in
                configuration.useStorage(sts: "http://127.0.0.1:9")
                breakIt(&configuration.storage)
            }
        }
        #expect(error?.description.contains(key) == true, "\(String(describing: error))")
        #expect(error?.description.contains(FakeSTS.marker) == false)
    }
}
