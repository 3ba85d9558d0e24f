import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyServer

@available(LatchkeyServer 1.0, *)
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, show and delete users.", subcommands: [List.self, Show.self, Delete.self, Budget.self])

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
            let (user, devices, budget) = try await withServices(self.options) { services in
                (
                    try await services.users.user(id: id), try await services.users.devices(ofUser: id),
                    try await services.budgets.budget(ofUser: id)
                )
            }
            guard let user else { throw ValidationError("No user with ID \(id).") }
            print("id: \(user.id)\nkind: \(user.kind.rawValue)\ncreated: \(user.createdAt.iso8601)")
            print("budget: \(budget.used) used of \(budget.limit) per \(budget.period), \(budget.remaining) remaining")
            print("devices: \(devices.count)")
            for device in devices { print("  \(device.id) registered \(device.createdAt.iso8601)") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with their devices, sessions and access codes; their tokens stop working.",
            discussion: "Apple refresh tokens of the user are revoked at Apple first; if Apple does not confirm, nothing is deleted.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let (deleted, apple) = try await withServices(self.options) { services in try await services.users.delete(userID: id) }
            print(
                "deleted user \(deleted.userID) (\(deleted.sessionIDs.count) sessions, \(deleted.accessCodeIDs.count) access codes"
                    + (apple > 0 ? ", \(apple) Apple tokens revoked)" : ")"))
        }
    }
}

@available(LatchkeyServer 1.0, *)
extension UsersCommand {
    struct Budget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user's budget, or set its limit with --set.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        @Option(help: "The new limit for the rolling period, in the app's units.")
        var set: Double?

        func run() async throws {
            let id = try canonical(self.id)
            if let limit = self.set, !(limit >= 0 && limit.isFinite) { throw ValidationError("--set must be a number ≥ 0.") }
            let budget = try await withServices(self.options) { services in
                if let limit = self.set { return try await services.budgets.setLimit(ofUser: id, to: limit) }
                guard try await services.users.user(id: id) != nil else { throw ServiceError.notFound("No user with ID \(id).") }
                return try await services.budgets.budget(ofUser: id)
            }
            print("limit: \(budget.limit)\nused: \(budget.used)\nremaining: \(budget.remaining)\nperiod: \(budget.period)")
        }
    }
}

@available(LatchkeyServer 1.0, *)
func canonical(_ id: String) throws -> String {
    guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a UUID.") }
    return uuid.uuidString.lowercased()
}
