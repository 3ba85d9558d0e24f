import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// `latchkey-device signup`, `verify`, `login` and `reset` as a person uses them: passwords on standard input, never
/// as arguments.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct LatchkeyDeviceEmailCommandTests {
    @Test func signupVerifyLoginAndResetFromTheTerminal() async throws {
        try await EmailPasswordEndToEndTests.withMailingServer { server in
            let app = try DeviceApp(server: server.url)
            defer { app.remove() }
            let userID = try await app.register()
            let email = EmailPasswordEndToEndTests.address("terminal")

            let signup = try await app.json(input: "correct horse battery\n", "signup", "--email", email)
            #expect(signup.result.exitCode == 0, "\(signup.result)")
            #expect(signup.object["user_id"] as? String == userID)
            #expect(signup.object["email_verified"] as? Bool == false)

            let verification = try await EmailPasswordEndToEndTests.newMail(to: email)
            let verify = try await app.json(input: verification.code + "\n", "verify", "--email", email, "--code")
            #expect(verify.result.exitCode == 0, "\(verify.result)")
            #expect(verify.object["email_verified"] as? Bool == true)

            #expect(try await app.run("signout").exitCode == 0)
            let wrong = try await app.run(input: "not my password\n", "login", "--email", email)
            #expect(wrong.exitCode == 3, "\(wrong)")
            #expect(wrong.stderr.contains("The email or password is not right."), "\(wrong)")
            let login = try await app.json(input: "correct horse battery\n", "login", "--email", email)
            #expect(login.result.exitCode == 0, "\(login.result)")
            #expect(login.object["user_id"] as? String == userID)

            server.clock.advance(by: 61)  // the server mails one address at most once a minute
            #expect(try await app.run("reset", "--email", email).exitCode == 0)
            let mail = try await EmailPasswordEndToEndTests.newMail(to: email, after: verification)
            let reset = try await app.json(input: mail.linkToken + "\nnew horse battery staple\n", "reset", "--link")
            #expect(reset.result.exitCode == 0, "\(reset.result)")
            #expect(reset.object["user_id"] as? String == userID)
            // The session here was the user's: revoked with the others.
            #expect(reset.object["state"] as? String == "signed_out")
            #expect(try await app.run(input: "new horse battery staple\n", "login", "--email", email).exitCode == 0)

            for result in [signup.result, login.result, reset.result, wrong] {
                for secret in ["correct horse battery", "new horse battery staple", "not my password", mail.linkToken] {
                    #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(result.arguments) printed a secret")
                }
            }
        }
    }

    @Test func aWeakPasswordExits1WithWhatToDo() async throws {
        try await EmailPasswordEndToEndTests.withMailingServer { server in
            let app = try DeviceApp(server: server.url)
            defer { app.remove() }
            let signup = try await app.run(input: "short\n", "signup", "--email", EmailPasswordEndToEndTests.address("weak"), "--new-user")
            #expect(signup.exitCode == 1, "\(signup)")
            #expect(signup.stderr.contains("Use at least 8 characters."), "\(signup)")
        }
    }

    @Test(arguments: [
        ["login", "--email", "a@example.com"], ["signup", "--email", "a@example.com"], ["reset", "--token", "t"], ["verify"],
        ["verify", "--email", "a@example.com"], ["verify", "--token", "t", "--code", "1"], ["reset"], ["reset", "--code", "123456"],
        // Codes and link tokens are read from standard input, never taken as arguments.
        ["verify", "--email", "a@example.com", "--code", "123456"], ["verify", "--link"], ["reset", "--link"],
        ["reset", "--email", "a@example.com", "--code"],
    ])
    func aMissingPasswordOrAnIncompleteFormExits2(arguments: [String]) async throws {
        try await DeviceApp.run { app, _ in
            let run = try await app.run(input: "", arguments)
            #expect(run.exitCode == 2, "\(run)")
            #expect(!run.stderr.isEmpty)
        }
    }
}

extension DeviceApp {
    /// `run(_:)` with `input` on standard input.
    func run(input: String, _ arguments: String...) async throws -> ProcessResult { try await self.run(input: input, arguments) }

    func run(input: String, _ arguments: [String]) async throws -> ProcessResult {
        let file = self.directory.appendingPathComponent("stdin-\(UUID().uuidString)")
        try Data(input.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var environment = ProcessRunner.inheritedEnvironment(removingPrefix: "LATCHKEY_")
        environment["HOME"] = self.directory.appendingPathComponent("home").path
        return try await ProcessRunner.run(
            try ProcessRunner.executable(named: "latchkey-device"),
            arguments: ["--server", self.server.absoluteString, "--state", self.stateDirectory.path] + arguments, environment: environment,
            workingDirectory: self.directory, standardInput: file)
    }

    /// `run(input:_:)` with `--json`, stdout parsed as a JSON object (empty when it is not one).
    func json(input: String, _ arguments: String...) async throws -> (result: ProcessResult, object: [String: Any]) {
        let result = try await self.run(input: input, ["--json"] + arguments)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return (result, object ?? [:])
    }
}
