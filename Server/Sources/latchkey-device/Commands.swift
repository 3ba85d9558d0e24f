import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Restore the session as an app does at launch and show it (exit 3 when signed out).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let state = await session.bootstrap()
            Output.print(Output.describe(state, deviceID: try? await session.deviceID()), json: self.options.json)
            switch state {
            case .signedIn: break
            case .storeUnavailable: throw ExitCode(5)
            default: throw ExitCode(3)
            }
        }
    }
}

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Register this device and start its session (POST /auth/register-device).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let signedIn = try await session.registerDevice()
            Output.print(Output.describe(.signedIn(signedIn), deviceID: try await session.deviceID()), json: self.options.json)
        }
    }
}

struct Guest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start a guest session (POST /auth/guest with X-Device-ID).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let limitations = try await session.continueAsGuest()
            var result = Output.describe(await session.state, deviceID: try await session.deviceID())
            result["max_actions_per_day"] = limitations.maxActionsPerDay ?? NSNull()
            result["features_disabled"] = limitations.featuresDisabled
            Output.print(result, json: self.options.json)
        }
    }
}

struct Redeem: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an access code with /validate-token and keep it as this app's bearer.",
        discussion:
            "Register the user first (`latchkey-device call POST /api/v1/users/register --auth none --register-user`), then have support run `latchkey access-code issue --user-id <device id>`. The code (a JWT) is read from standard input's first line, never an argument: `printf '%s\\n' \"$CODE\" | latchkey-device redeem`."
    )
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Trade the code for a session with a refresh token instead of using it directly.") var exchange = false
    @Flag(help: "Accept a code for another user than this device.") var anyUser = false

    func run() async throws {
        let code = try StandardInput.firstLine(naming: "access code")
        try await self.options.run(configure: { $0.requireAccessCodeForThisDevice = !self.anyUser }) { session in
            let signedIn = try await session.redeemAccessCode(code, exchange: self.exchange)
            Output.print(Output.describe(.signedIn(signedIn), deviceID: try await session.deviceID()), json: self.options.json)
        }
    }
}

struct Apple: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in with Apple (POST /auth/apple), linking this device's user when its session is in use.",
        discussion:
            "Standard input's first line is the identity token (a JWT) from Apple, its second line (optional) the authorization code: never arguments, which the process list shows. --nonce is the raw nonce whose SHA-256 (lowercase hex) was the nonce of the Apple request. Exit 3 when the token or nonce is refused, 1 when the Apple ID belongs to another user, 5 when Apple refused the code. When the user has a second factor, exit 3 with mfa_required: the sign-in waits five minutes in --state for `mfa verify`."
    )
    @OptionGroup var options: DeviceOptions
    @Option(help: "The raw nonce.") var nonce: String
    @Flag(help: "Sign in as the Apple ID's own user even when this device's session is in use.") var noLink = false

    func run() async throws {
        let identityToken = try StandardInput.firstLine(naming: "identity token")
        let code = readLine(strippingNewline: true).flatMap { $0.isEmpty ? nil : $0 }
        try await self.options.run { session in
            let signedIn = try await session.signInWithApple(
                identityToken: identityToken, rawNonce: self.nonce, authorizationCode: code, linkingCurrentUser: !self.noLink)
            Output.print(Output.describe(.signedIn(signedIn), deviceID: try await session.deviceID()), json: self.options.json)
        }
    }
}

struct Me: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the signed-in user's profile (GET /auth/me).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let response = try await session.send(.get("/api/v1/auth/me", auth: .bearer))
            print(String(decoding: response.body, as: UTF8.self))
        }
    }
}

struct Refresh: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Refresh the session now (POST /auth/refresh).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let refreshed = try await session.refresh()
            Output.print(Output.describe(.signedIn(refreshed), deviceID: try await session.deviceID()), json: self.options.json)
        }
    }
}

struct SignOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signout", abstract: "Sign out here and revoke the session on the server.")
    @OptionGroup var options: DeviceOptions
    @Option(help: "local (this session) or global (every session of the user).") var scope: LogoutScope = .local

    func run() async throws {
        try await self.options.run { session in
            try await session.signOut(scope: self.scope)
            Output.print(["state": "signed_out"], json: self.options.json)
        }
    }
}

extension LogoutScope: ExpressibleByArgument {}
