import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyServer

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, show and delete users.", subcommands: [List.self, Show.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users, oldest first.")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "At most this many users.")
        var limit = 100

        @Option(help: "Skip this many users.")
        var offset = 0

        func run() async throws {
            let users = try await withServices(self.options) { services in
                try await services.users.users(limit: self.limit, offset: self.offset)
            }
            print(["ID", "KIND", "CREATED"].joined(separator: "\t"))
            for user in users { print([user.id, user.kind.rawValue, user.createdAt.iso8601].joined(separator: "\t")) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one user and their devices.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let (user, devices) = try await withServices(self.options) { services in
                (try await services.users.user(id: id), try await services.users.devices(ofUser: id))
            }
            guard let user else { throw ValidationError("No user with ID \(id).") }
            print("id: \(user.id)\nkind: \(user.kind.rawValue)\ncreated: \(user.createdAt.iso8601)\ndevices: \(devices.count)")
            for device in devices { print("  \(device.id) registered \(device.createdAt.iso8601)") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with their devices, sessions and access codes; their tokens stop working.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let deleted = try await withServices(self.options) { services in try await services.users.delete(userID: id) }
            print("deleted user \(deleted.userID) (\(deleted.sessionIDs.count) sessions, \(deleted.accessCodeIDs.count) access codes)")
        }
    }
}

func canonical(_ id: String) throws -> String {
    guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a UUID.") }
    return uuid.uuidString.lowercased()
}
