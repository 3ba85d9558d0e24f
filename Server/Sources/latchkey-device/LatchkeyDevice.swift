import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

/// `latchkey-device`: one installed app, in a terminal, built only on the SDK.
///
/// Each run is an app launch: the device identity and session persist in `--state` between runs.
/// Exit codes: 0 ok, 1 request refused (other 4xx), 2 usage, 3 signed out or unauthorized, 4 rate limited,
/// 5 offline or server error.
struct LatchkeyDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey-device",
        abstract: "A terminal app that uses Latchkey like an installed app does.",
        discussion: """
            State (device UUID, device secret, tokens) lives in --state, like an app's Keychain between launches.
            Exit codes: 0 ok, 1 request refused, 2 usage, 3 signed out or unauthorized, 4 rate limited, 5 offline or server error.
            """,
        version: LatchkeyVersion.current,
        subcommands: [
            Status.self, Register.self, Guest.self, Redeem.self, Apple.self, Signup.self, Login.self, Verify.self, Reset.self, Me.self, Refresh.self,
            MFA.self, Call.self, Storage.self, Assets.self, SignOut.self, Watch.self, Sessions.self, EndSession.self, Export.self,
        ])

    // Declared here too so the options may come before the command, as in `latchkey-device --state DIR status`.
    @OptionGroup var options: DeviceOptions
}

@main
enum Main {
    /// Parses and runs, mapping usage errors to exit code 2 (ArgumentParser's default is 64).
    static func main() async {
        do {
            var command = try LatchkeyDevice.parseAsRoot()
            let parsed = type(of: command)
            if !parsed.configuration.subcommands.isEmpty {  // no command given, or a group (storage, assets) without its command
                FileHandle.standardError.write(Data((LatchkeyDevice.helpMessage(for: parsed) + "\n").utf8))
                LatchkeyDevice.exit(withError: ExitCode(2))
            }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if LatchkeyDevice.exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((LatchkeyDevice.fullMessage(for: error) + "\n").utf8))
                LatchkeyDevice.exit(withError: ExitCode(2))
            }
            LatchkeyDevice.exit(withError: error)
        }
    }
}
