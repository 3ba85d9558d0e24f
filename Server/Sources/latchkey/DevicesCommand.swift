import ArgumentParser
import Foundation
import LatchkeyServer

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Support commands for devices.", subcommands: [Show.self, Reset.self])

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
            let (secret, revoked) = try await withAudit(
                self.options, AuditAction.deviceReset, { ("device \(id)", "\(counted($0.1, "session")) ended") }
            ) {
                services in try await services.devices.reset(deviceID: id)
            }
            print(secret)
            FileHandle.standardError.write(Data("device \(id): new secret above (shown once); \(counted(revoked, "session")) ended\n".utf8))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one device: its user, when it registered and was last seen, and App Attest.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The device's UUID.")
        var id: String

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = try canonical(self.id)
            let (device, key) = try await withServices(self.options) { services in
                (try await services.store.device(id: id), try await services.store.attestedKey(deviceID: id))
            }
            guard device != nil || key != nil else { throw ServiceError.notFound("No device with ID \(id).") }
            if self.json {
                return try printJSON(
                    DeviceShown(
                        id: id, userID: device?.userID, createdAt: device?.createdAt, lastSeenAt: device?.lastSeenAt, attested: key != nil,
                        attestation: key?.method.rawValue, attestedAt: key?.attestedAt))
            }
            print("id: \(id)")
            if let device {
                print("user: \(device.userID)\nregistered: \(device.createdAt.iso8601)\nlast seen: \(device.lastSeenAt?.iso8601 ?? "never")")
            } else {
                print("registered: no (a guest device)")
            }
            print("attested: \(key.map { "yes (\($0.method.rawValue), \($0.attestedAt.iso8601))" } ?? "no")")
        }
    }
}

/// `latchkey devices show --json`.
struct DeviceShown: Encodable {
    let id: String
    let userID: String?
    let createdAt: Date?
    let lastSeenAt: Date?
    let attested: Bool
    let attestation: String?
    let attestedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case attested
        case attestation
        case attestedAt = "attested_at"
    }
}
