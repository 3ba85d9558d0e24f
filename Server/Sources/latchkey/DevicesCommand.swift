import ArgumentParser
import Foundation
import LatchkeyServer

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Support commands for devices.", subcommands: [Reset.self])

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a device a new secret (printed once), forget its key and end its sessions.",
            discussion: """
                For a device whose secret or key may have leaked. The old secret and key stop working at once; the device \
                signs in again only with the new secret (latchkey-device --device-secret, or register-device's device_secret).
                """)

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The device's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let (secret, revoked) = try await withAudit(self.options, AuditAction.deviceReset, { ("device \(id)", "\($0.1) sessions ended") }) {
                services in try await services.devices.reset(deviceID: id)
            }
            print(secret)
            FileHandle.standardError.write(Data("device \(id): new secret above (shown once); \(revoked) sessions ended\n".utf8))
        }
    }
}
