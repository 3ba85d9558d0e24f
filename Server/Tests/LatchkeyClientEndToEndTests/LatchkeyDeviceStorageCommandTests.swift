import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `latchkey-device storage …` and `assets …`, the built executable run as a separate process against a fake server that
/// speaks the storage wire contract (and holds the objects its presigned URLs reach).
@Suite(.timeLimit(.minutes(3)))
struct LatchkeyDeviceStorageCommandTests {
    static let secrets = [FakeStorageServer.secretAccessKey, FakeStorageServer.sessionToken, FakeStorageServer.accessKeyID]

    /// Runs `body` with a fake server and a fresh install pointed at it.
    func run(storage: Bool = true, _ body: @Sendable (DeviceApp, FakeStorageServer) async throws -> Void) async throws {
        try await FakeStorageServer.run(storage: storage) { server in
            let app = try DeviceApp(server: server.url)
            defer { app.remove() }
            try await body(app, server)
        }
    }

    @Test(arguments: [
        ["storage"], ["storage", "put", "/dev/null"], ["storage", "put", "/nonexistent", "k"], ["storage", "get"], ["assets"], ["assets", "url"],
    ])
    func aGroupWithoutItsCommandOrAMissingArgumentExits2(arguments: [String]) async throws {
        try await self.run { app, _ in
            let run = try await app.run(arguments)
            #expect(run.exitCode == 2, "\(run)")
            #expect(run.stderr.lowercased().contains("usage:"), "\(run)")
        }
    }

    @Test func storageCredentialsShowWhereTheyReachAndNoSecretUnlessAskedTo() async throws {
        try await self.run { app, _ in
            try await app.register()
            let text = try await app.run("storage", "credentials")
            let json = try await app.json("storage", "credentials")
            #expect(text.exitCode == 0, "\(text)")
            #expect(text.stdout.contains("prefix: users/u/") && text.stdout.contains("bucket: photos"), "\(text)")
            #expect(json.object["prefix"] as? String == "users/u/")
            #expect(json.object["expires_in"] as? Int == 3600)
            for output in [text.stdout + text.stderr, json.result.stdout + json.result.stderr] {
                for secret in Self.secrets { #expect(!output.contains(secret), "\(secret) printed: \(output)") }
            }

            let shown = try await app.json("storage", "credentials", "--show-secrets")
            #expect(shown.object["secret_access_key"] as? String == FakeStorageServer.secretAccessKey)
            #expect(shown.object["session_token"] as? String == FakeStorageServer.sessionToken)
            #expect(shown.object["access_key_id"] as? String == FakeStorageServer.accessKeyID)
        }
    }

    @Test func signedOutStorageCredentialsExit3() async throws {
        try await self.run { app, _ in
            let run = try await app.run("storage", "credentials")
            #expect(run.exitCode == 3, "\(run)")
            #expect(run.stderr.contains("not signed in"), "\(run)")
        }
    }

    @Test func aServerWithoutStorageExits1SayingSo() async throws {
        try await self.run(storage: false) { app, _ in
            try await app.register()
            let run = try await app.run("storage", "credentials")
            #expect(run.exitCode == 1, "\(run)")
            #expect(run.stderr == "error: This server offers no storage.\n", "\(run)")
        }
    }

    @Test func putThenGetCarriesAFileThroughPresignedURLs() async throws {
        try await self.run { app, server in
            try await app.register()
            let content = Array("a photo, more or less\n".utf8) + [0, 10]
            let file = app.directory.appendingPathComponent("photo.bin")
            try Data(content).write(to: file)

            let put = try await app.json("storage", "put", file.path, "photos/a.bin", "--content-type", "image/x-test")
            #expect(put.result.exitCode == 0, "\(put.result)")
            #expect(put.object["bytes"] as? Int == content.count)
            #expect(server.object("users/u/photos/a.bin")?.body == content)
            #expect(server.object("users/u/photos/a.bin")?.contentType == "image/x-test")

            let output = app.directory.appendingPathComponent("downloaded.bin")
            let get = try await app.run("storage", "get", "photos/a.bin", "--output", output.path)
            #expect(get.exitCode == 0, "\(get)")
            #expect(try Data(contentsOf: output) == Data(content))
            let toStdout = try await app.run("storage", "get", "photos/a.bin")
            #expect(toStdout.stdout == String(decoding: content, as: UTF8.self), "\(toStdout)")
        }
    }

    @Test func aMissingObjectExits1NamingTheStoresErrorCode() async throws {
        try await self.run { app, _ in
            try await app.register()
            let run = try await app.run("storage", "get", "photos/none.jpg")
            #expect(run.exitCode == 1, "\(run)")
            #expect(run.stderr == "error: The store answered the GET with HTTP 404 (NoSuchKey).\n", "\(run)")
        }
    }

    @Test func aKeyTheServerRefusesExits1() async throws {
        try await self.run { app, _ in
            try await app.register()
            let run = try await app.run("storage", "get", "../other-user/a.jpg")
            #expect(run.exitCode == 1, "\(run)")
            #expect(run.stderr.contains("The storage key was refused: key contains a .. segment."), "\(run)")
        }
    }

    @Test func assetsAreListedAndFetchedWithTheDeviceIDOnly() async throws {
        try await self.run { app, server in
            let deviceID = try await app.register()
            server.putObject("assets/kits/909.zip", Array("909".utf8))
            server.putObject("assets/kits/808.zip", Array("eight-o-eight".utf8))
            server.putObject("assets/fonts/a.sf2", [1])

            let list = try await app.run("assets", "list", "--prefix", "kits/")
            #expect(list.exitCode == 0, "\(list)")
            #expect(list.stdoutLines == ["13\tkits/808.zip", "3\tkits/909.zip"], "\(list)")
            let url = try await app.run("assets", "url", "kits/909.zip")
            #expect(url.exitCode == 0, "\(url)")
            let (body, _) = try await URLSession.shared.data(from: try #require(URL(string: url.stdout.trimmingCharacters(in: .newlines))))
            #expect(body == Data("909".utf8))

            #expect(server.assetHeaders.count == 2)
            for headers in server.assetHeaders {
                #expect(headers.deviceID == deviceID)
                #expect(headers.authorization == nil)
            }
        }
    }

    @Test func assetsForADeviceTheServerDoesNotKnowExit3() async throws {
        try await self.run { app, _ in
            let run = try await app.run("assets", "list")
            #expect(run.exitCode == 3, "\(run)")
            #expect(run.stderr.contains("not registered"), "\(run)")
        }
    }
}
