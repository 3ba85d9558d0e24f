import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List where the user is signed in (GET /users/me/sessions): one live session a line, newest first.",
        discussion: """
            Each line: the session ID, the device ID (- for none), how it began, when it began, the day it was last used, and \
            `current` for this app's own. --json prints the server's document.
            """)
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            let sessions = try await session.sessions()
            if self.options.json { return Output.printJSON(encoding: AccountSessionsResponse(sessions: sessions)) }
            for entry in sessions {
                let created = entry.createdAt.formatted(.iso8601)
                print(
                    [entry.id, entry.deviceID ?? "-", entry.method, created, entry.lastUsedAt, entry.current ? "current" : ""].joined(separator: " "))
            }
        }
    }
}

struct EndSession: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "end-session",
        abstract: "End one of the user's sessions (DELETE /users/me/sessions/{id}).",
        discussion: """
            Its refresh token stops working and its live events hear session.revoked. Ending this app's own session signs it out \
            here too. Exit 1 with not_found when the ID is not one of the user's live sessions.
            """)
    @OptionGroup var options: DeviceOptions
    @Argument(help: "The session ID (`sessions` lists them).") var sessionID: String

    func run() async throws {
        try await self.options.run { session in
            try await session.endSession(id: self.sessionID)
            Output.print(["ended": self.sessionID], json: self.options.json)
        }
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print everything the server holds about the user (GET /users/me/export), as the server wrote it.",
        discussion: "Needs a recent sign-in: exit 1 with reauthentication_required otherwise (sign in again).")
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        try await self.options.run { session in
            print(String(decoding: try await session.exportAccount(), as: UTF8.self))
        }
    }
}
