import Foundation
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `latchkey-device` as a person uses it: the built executable, run as a separate process against a live server in
/// this process. Each run is an app launch; `--state` is the app's Keychain between launches.
@Suite(.timeLimit(.minutes(3)))
struct LatchkeyDeviceCommandTests {
    // MARK: register, status, me, refresh

    @Test func registerExitsZeroAndTheNextRunsStatusIsSignedInAsTheSameUser() async throws {
        try await DeviceApp.run { app, _ in
            let register = try await app.json("register")
            #expect(register.result.exitCode == 0, "\(register.result)")
            let userID = try #require(register.object["user_id"] as? String)

            let status = try await app.json("status")
            #expect(status.result.exitCode == 0, "\(status.result)")
            #expect(status.object["state"] as? String == "signed_in")
            #expect(status.object["user_id"] as? String == userID)
            #expect(status.object["device_id"] as? String == userID)  // a device user's ID is its device UUID
        }
    }

    @Test func meExitsZeroAndPrintsTheUserID() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            let me = try await app.run("me")
            #expect(me.exitCode == 0, "\(me)")
            let profile = try JSONSerialization.jsonObject(with: Data(me.stdout.utf8)) as? [String: Any]
            #expect(profile?["user_id"] as? String == userID, "\(me)")
        }
    }

    @Test func refreshExitsZeroAndStoresTheNextTokenPair() async throws {
        try await DeviceApp.run { app, _ in
            try await app.register()
            let before = try #require(try app.credentials()?.session)
            let refresh = try await app.run("refresh")
            #expect(refresh.exitCode == 0, "\(refresh)")
            let after = try #require(try app.credentials()?.session)
            #expect(after.accessToken != before.accessToken)
            #expect(after.refreshToken != before.refreshToken)
            #expect(after.userID == before.userID)
        }
    }

    @Test func anAccessTokenTheServerNoLongerAcceptsIsRefreshedAndTheRequestSucceeds() async throws {
        try await DeviceApp.run { app, server in
            let userID = try await app.register()
            let before = try #require(try app.credentials()?.session)
            server.clock.advance(by: 3600)  // the server now sees the access token as expired; the app's clock does not
            let me = try await app.run("me")
            #expect(me.exitCode == 0, "\(me)")
            #expect(me.stdout.contains(userID))
            #expect(try app.credentials()?.session?.accessToken != before.accessToken)
        }
    }

    @Test func concurrentRefreshRunsOnTheSameStateAllSucceedAndLeaveTheDeviceSignedIn() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            let runs = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                for _ in 0..<3 { group.addTask { try await app.run("refresh") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for run in runs { #expect(run.exitCode == 0, "\(run)") }
            let status = try await app.json("status")
            #expect(status.result.exitCode == 0, "\(status.result)")
            #expect(status.object["user_id"] as? String == userID)
            #expect(try await app.run("me").exitCode == 0)
        }
    }

    // MARK: call

    @Test func callWithBearerAuthOnValidateTokenExitsZeroAndReportsTheUser() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            let call = try await app.json("call", "GET", "/api/v1/validate-token", "--auth", "bearer")
            #expect(call.result.exitCode == 0, "\(call.result)")
            #expect(call.object["status"] as? Int == 200)
            let body = call.object["body"] as? [String: Any]
            #expect(body?["valid"] as? Bool == true)
            #expect(body?["sub"] as? String == userID)
        }
    }

    @Test func callWithoutAuthOnAProtectedRouteExits3() async throws {
        try await DeviceApp.run { app, _ in
            try await app.register()
            let call = try await app.run("call", "GET", "/api/v1/users/me", "--auth", "none")
            #expect(call.exitCode == 3, "\(call)")
            #expect(call.stderr.contains("did not accept"), "\(call)")
        }
    }

    @Test func callWithBearerAuthSendsTheStoredAccessTokenAndNoDeviceID() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            let call = try await app.run("call", "GET", "/api/v1/assets/echo", "--auth", "bearer")
            #expect(call.exitCode == 0, "\(call)")
            let accessToken = try #require(try app.credentials()?.session?.accessToken)
            #expect(server.seen.last == SeenHeaders.Seen(authorization: "Bearer \(accessToken)", deviceID: nil))
        }
    }

    @Test func callWithDeviceAuthSendsOnlyTheDeviceID() async throws {
        try await DeviceApp.run { app, server in
            let userID = try await app.register()
            let call = try await app.run("call", "GET", "/api/v1/assets/echo", "--auth", "device")
            #expect(call.exitCode == 0, "\(call)")
            #expect(server.seen.last == SeenHeaders.Seen(authorization: nil, deviceID: userID))
        }
    }

    // MARK: signout

    @Test func callWithAnAbsoluteURLReachesTheAppsOwnRouteAndStreamsItsLines() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            server.stream.clientSawTheFirstEvent()  // a separate process cannot say so: the route sends both at once
            let url = server.url.appendingPathComponent("api/v1/compose/stream").absoluteString
            let call = try await app.run("call", "POST", url, "--stream")
            #expect(call.exitCode == 0, "\(call)")
            #expect(call.stdoutLines.filter { !$0.isEmpty } == ["data: one", "data: two"])
            #expect(server.seen.last?.authorization?.hasPrefix("Bearer ") == true)

            let refused = try await app.run("call", "GET", server.url.appendingPathComponent("api/v1/users/nobody").absoluteString)
            #expect(refused.exitCode == 1, "\(refused)")
        }
    }

    @Test func callWithBearerAuthToAnOriginThatIsNotListedSendsNothingAndExits2() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            // The same server under another origin: localhost is not 127.0.0.1, which --server names.
            let origin = "http://localhost:\(try #require(server.url.port))"
            let echo = origin + "/api/v1/assets/echo"
            let refused = try await app.run("call", "GET", echo, "--auth", "bearer")
            #expect(refused.exitCode == 2, "\(refused)")
            #expect(refused.stderr.contains("\(origin) is neither the Latchkey server"), "\(refused)")
            #expect(server.seen.last == nil)  // nothing reached the route

            let listed = try await app.run("call", "GET", echo, "--auth", "bearer", "--api-origin", origin)
            #expect(listed.exitCode == 0, "\(listed)")
            #expect(server.seen.last?.authorization?.hasPrefix("Bearer ") == true)
        }
    }

    @Test func callWithDeviceForGuestsSendsTheDeviceIDOnlyForAGuest() async throws {
        try await DeviceApp.run { app, server in
            #expect(try await app.run("guest").exitCode == 0)
            let echo = server.url.appendingPathComponent("api/v1/assets/echo").absoluteString
            #expect(try await app.run("call", "GET", echo, "--auth", "device-for-guests").exitCode == 0)
            #expect(server.seen.last?.deviceID != nil)
            try await app.register()
            #expect(try await app.run("call", "GET", echo, "--auth", "device-for-guests").exitCode == 0)
            #expect(server.seen.last?.deviceID == nil)
        }
    }

    @Test func signoutLocalExitsZeroAndThenStatusAndMeExit3() async throws {
        try await DeviceApp.run { app, _ in
            try await app.register()
            let signout = try await app.run("signout", "--scope", "local")
            #expect(signout.exitCode == 0, "\(signout)")

            let status = try await app.json("status")
            #expect(status.result.exitCode == 3, "\(status.result)")
            #expect(status.object["state"] as? String == "signed_out")
            let me = try await app.run("me")
            #expect(me.exitCode == 3, "\(me)")
            #expect(me.stderr.contains("not signed in"), "\(me)")
        }
    }

    @Test func signoutRevokesTheSessionOnTheServer() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            let session = try #require(try app.credentials()?.session)
            #expect(try await app.run("signout", "--scope", "local").exitCode == 0)
            #expect(try await server.status(of: "/api/v1/validate-token", bearer: session.accessToken) == 401)
            let refreshToken = try #require(session.refreshToken)
            #expect(try await server.refreshStatus(refreshToken) == 401)
        }
    }

    @Test func registerAfterSignoutGetsTheSameAccountBack() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            #expect(try await app.run("signout").exitCode == 0)
            let again = try await app.json("register")
            #expect(again.result.exitCode == 0, "\(again.result)")
            #expect(again.object["user_id"] as? String == userID)
        }
    }

    // MARK: redeem

    @Test func redeemingACodeIssuedForThisDeviceSignsItIn() async throws {
        try await DeviceApp.run { app, server in
            let deviceID = try await app.registerUser()
            let code = try await server.services.accessCodes.issue(userID: deviceID, expiresIn: 3600, note: "test").code

            let redeem = try await app.run(input: code + "\n", "redeem")
            #expect(redeem.exitCode == 0, "\(redeem)")
            let status = try await app.json("status")
            #expect(status.result.exitCode == 0, "\(status.result)")
            #expect(status.object["state"] as? String == "signed_in")
            #expect(status.object["kind"] as? String == "access_code")
            #expect(status.object["user_id"] as? String == deviceID)
            #expect(try await app.run("me").exitCode == 0)
        }
    }

    @Test func redeemingACodeForAnotherUserIsRefusedWithAReadableMessageAndStoresNothing() async throws {
        try await DeviceApp.run { app, server in
            _ = try await app.registerUser()
            let otherUser = UUID().uuidString.lowercased()
            _ = try await server.services.users.register(userID: otherUser)
            let code = try await server.services.accessCodes.issue(userID: otherUser, expiresIn: 3600, note: nil).code

            let redeem = try await app.run(input: code + "\n", "redeem")
            #expect(redeem.exitCode == 3, "\(redeem)")
            #expect(redeem.stderr == "error: This access code belongs to another device.\n", "\(redeem)")
            #expect(try app.credentials()?.session == nil)
        }
    }

    @Test func redeemingSomethingThatIsNotACodeExits3SayingItIsNotValid() async throws {
        try await DeviceApp.run { app, _ in
            _ = try await app.registerUser()
            let redeem = try await app.run(input: "not-a-code\n", "redeem")
            #expect(redeem.exitCode == 3, "\(redeem)")
            #expect(redeem.stderr.contains("not valid"), "\(redeem)")
        }
    }

    /// An access code has no refresh token: `refresh` cannot renew it, but the code is still valid on the server and
    /// the app should stay signed in with it.
    @Test func refreshOnARedeemedAccessCodeDoesNotThrowTheValidCodeAway() async throws {
        try await DeviceApp.run { app, server in
            let deviceID = try await app.registerUser()
            let code = try await server.services.accessCodes.issue(userID: deviceID, expiresIn: 3600, note: nil).code
            #expect(try await app.run(input: code + "\n", "redeem").exitCode == 0)

            let refresh = try await app.run("refresh")
            let status = try await app.run("status")
            let validation = try await server.status(of: "/api/v1/validate-token", bearer: code)
            #expect(validation == 200)  // the server still accepts the code
            #expect(refresh.exitCode == 1, "\(refresh)")
            #expect(refresh.stderr.contains("cannot be refreshed"), "\(refresh)")
            #expect(status.exitCode == 0, "\(status)")
        }
    }

    // MARK: usage, offline, secrets

    @Test func anUnknownCommandExits2() async throws {
        try await DeviceApp.run { app, _ in
            let run = try await app.run("frobnicate")
            #expect(run.exitCode == 2, "\(run)")
            #expect(run.stderr.contains("Usage:"), "\(run)")
        }
    }

    /// Secrets are read from standard input, never taken as arguments (the process list shows those to every user).
    @Test func anAccessCodeOrAppleTokenGivenAsAnArgumentIsAUsageErrorAndStoresNothing() async throws {
        try await DeviceApp.run { app, server in
            let deviceID = try await app.registerUser()
            let code = try await server.services.accessCodes.issue(userID: deviceID, expiresIn: 3600, note: nil).code
            let redeem = try await app.run("redeem", code)
            #expect(redeem.exitCode == 2, "\(redeem)")
            #expect(try await app.json("status").object["kind"] as? String != "access_code")
            let apple = try await app.run(input: "", "apple", "--identity-token", "eyJ.token", "--nonce", "n")
            #expect(apple.exitCode == 2, "\(apple)")
        }
    }

    @Test(arguments: [["redeem"], ["call", "GET"], ["call"], [], ["apple"], ["apple", "--identity-token", "t"], ["apple", "--nonce", "n"]])
    func aMissingArgumentOrCommandExits2(arguments: [String]) async throws {
        try await DeviceApp.run { app, _ in
            let run = try await app.run(arguments)
            #expect(run.exitCode == 2, "\(run)")
            #expect(!run.stderr.isEmpty)
        }
    }

    @Test(arguments: [["call", "GET", "/api/v1/health", "--auth", "sometimes"], ["signout", "--scope", "everywhere"]])
    func aBadOptionValueExits2(arguments: [String]) async throws {
        try await DeviceApp.run { app, _ in
            let run = try await app.run(arguments)
            #expect(run.exitCode == 2, "\(run)")
        }
    }

    @Test func registeringWithNothingListeningOnTheServerPortExits5() async throws {
        let app = try DeviceApp(server: URL(string: "http://127.0.0.1:1")!)
        defer { app.remove() }
        let run = try await app.run("register")
        #expect(run.exitCode == 5, "\(run)")
        #expect(run.stderr.contains("Cannot reach the server"), "\(run)")
    }

    @Test func meWithTheServerUnreachableExits5AndKeepsTheSession() async throws {
        try await DeviceApp.run { app, _ in
            try await app.register()
            let session = try app.credentials()?.session
            let me = try await app.offline.run("me")
            #expect(me.exitCode == 5, "\(me)")
            #expect(try app.credentials()?.session == session)
            #expect(try await app.run("me").exitCode == 0)  // back online, still signed in
        }
    }

    @Test func noCommandPrintsTheAccessTokenTheRefreshTokenOrTheDeviceSecret() async throws {
        try await DeviceApp.run { app, server in
            var secrets: Set<String> = []
            var results: [ProcessResult] = []
            func record(_ arguments: String...) async throws {
                results.append(try await app.run(arguments))
                results.append(try await app.run(["--json"] + arguments))
                if let credentials = try app.credentials() {
                    secrets.formUnion(
                        [credentials.deviceSecret, credentials.session?.accessToken, credentials.session?.refreshToken].compactMap { $0 })
                }
                secrets.formUnion(try app.storedDeviceKey().map { [$0] } ?? [])
            }
            try await record("register")
            try await record("status")
            try await record("me")
            try await record("refresh")
            try await record("call", "GET", "/api/v1/validate-token", "--auth", "bearer")
            try await record("call", "GET", "/api/v1/assets/echo", "--auth", "guest")
            try await record("call", "GET", "/api/v1/users/me", "--auth", "none")
            server.clock.advance(by: 3600)  // a refresh on the way
            try await record("me")
            results.append(try await app.offline.run("me"))
            results.append(try await app.offline.run("--json", "signout"))
            try await record("signout")
            try await record("me")
            try await record("refresh")
            try await record("status")

            #expect(secrets.count >= 5)  // the device key and at least two token pairs
            for result in results {
                for secret in secrets {
                    #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a secret was printed by \(result.arguments)")
                }
            }
        }
    }
}

/// One install of `latchkey-device`: a state directory (its Keychain between launches) and a home directory of its
/// own, so no run can touch `~/.latchkey-device`.
struct DeviceApp: Sendable {
    let server: URL
    let directory: URL
    var stateDirectory: URL { self.directory.appendingPathComponent("state") }

    /// A fresh install (nothing in its state yet) pointed at `server`.
    init(server: URL) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
        self.init(server: server, directory: directory)
    }

    private init(server: URL, directory: URL) {
        self.server = server
        self.directory = directory
    }

    /// Runs `body` with a live server (serving the event stream too, with `servingEvents`) and a fresh install pointed at it.
    static func run(
        servingEvents: Bool = false, configure: (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @Sendable (DeviceApp, LiveServer) async throws -> Void
    ) async throws {
        try await LiveServer.run(servingEvents: servingEvents, configure: configure) { server in
            let app = try DeviceApp(server: server.url)
            defer { app.remove() }
            try await body(app, server)
        }
    }

    /// The same install, pointed at a port nothing listens on.
    var offline: DeviceApp {
        // Port 1 on the loopback: refused at once.
        DeviceApp(server: URL(string: "http://127.0.0.1:1")!, directory: self.directory)
    }

    /// `latchkey-device --server <server> --state <state> <arguments>`, with no `LATCHKEY_*` variable from this process.
    func run(_ arguments: String...) async throws -> ProcessResult { try await self.run(arguments) }

    func run(_ arguments: [String]) async throws -> ProcessResult {
        var environment = ProcessRunner.inheritedEnvironment(removingPrefix: "LATCHKEY_")
        environment["HOME"] = self.directory.appendingPathComponent("home").path
        return try await ProcessRunner.run(
            try ProcessRunner.executable(named: "latchkey-device"),
            arguments: ["--server", self.server.absoluteString, "--state", self.stateDirectory.path] + arguments, environment: environment,
            workingDirectory: self.directory)
    }

    /// Runs with `--json` and parses stdout as a JSON object (empty when it is not one).
    func json(_ arguments: String...) async throws -> (result: ProcessResult, object: [String: Any]) {
        let result = try await self.run(["--json"] + arguments)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return (result, object ?? [:])
    }

    /// `register`, which must succeed; returns the user ID.
    @discardableResult
    func register() async throws -> String {
        let register = try await self.json("register")
        guard register.result.exitCode == 0, let userID = register.object["user_id"] as? String else {
            throw ProcessRunnerError("register failed: \(register.result)")
        }
        return userID
    }

    /// Creates the user whose ID is this device's UUID, as the Stori flow does before support issues a code
    /// (`call POST /api/v1/users/register --auth none --register-user`); returns the device UUID from `status`.
    func registerUser() async throws -> String {
        let call = try await self.run("call", "POST", "/api/v1/users/register", "--auth", "none", "--register-user")
        guard call.exitCode == 0 else { throw ProcessRunnerError("users/register failed: \(call)") }
        let status = try await self.json("status")
        guard let deviceID = status.object["device_id"] as? String else { throw ProcessRunnerError("status printed no device_id: \(status.result)") }
        return deviceID
    }

    /// What the app keeps in its state directory.
    func credentials() throws -> StoredCredentials? { try FileSecureStore(directory: self.stateDirectory).load() }

    /// The device key's private part as stored (base64), read from the state file itself.
    func storedDeviceKey() throws -> String? {
        let files = try FileManager.default.contentsOfDirectory(at: self.stateDirectory, includingPropertiesForKeys: nil)
        for file in files {
            guard let object = try? JSONSerialization.jsonObject(with: try Data(contentsOf: file)) as? [String: Any],
                let key = object["device_key"] as? [String: Any], let data = key["data"] as? String
            else { continue }
            return data
        }
        return nil
    }

    func remove() { try? FileManager.default.removeItem(at: self.directory) }
}

extension LiveServer {
    /// The status of `GET path` with `Authorization: Bearer <token>`, sent without the SDK.
    func status(of path: String, bearer token: String) async throws -> Int {
        var request = URLRequest(url: self.url.appendingPathComponent(path))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// The status of `POST /api/v1/auth/refresh` with `refreshToken`, sent without the SDK.
    func refreshStatus(_ refreshToken: String) async throws -> Int {
        var request = URLRequest(url: self.url.appendingPathComponent("/api/v1/auth/refresh"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["refresh_token": refreshToken])
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
