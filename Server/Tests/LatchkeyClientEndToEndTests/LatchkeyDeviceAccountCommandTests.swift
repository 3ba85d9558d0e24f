import Foundation
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `latchkey-device sessions`, `end-session` and `export`: the built executable against a live server.
@Suite(.timeLimit(.minutes(3)))
struct LatchkeyDeviceAccountCommandTests {
    @Test func sessionsListsThisDevicesSessionAsCurrent() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            let sessionID = try #require(try app.credentials()?.session?.sessionID)
            let listed = try await app.json("sessions")
            #expect(listed.result.exitCode == 0, "\(listed.result)")
            let sessions = try #require(listed.object["sessions"] as? [[String: Any]])
            #expect(sessions.count == 1)
            #expect(sessions.first?["id"] as? String == sessionID)
            #expect(sessions.first?["device_id"] as? String == userID)
            #expect(sessions.first?["method"] as? String == "device")
            #expect(sessions.first?["current"] as? Bool == true)

            let plain = try await app.run("sessions")
            #expect(plain.exitCode == 0, "\(plain)")
            #expect(plain.stdoutLines.first?.hasPrefix(sessionID + " " + userID + " device ") == true, "\(plain)")
            #expect(plain.stdoutLines.first?.hasSuffix(" current") == true, "\(plain)")
        }
    }

    @Test func endSessionOfItsOwnSessionSignsOutHereAndOnTheServer() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            let session = try #require(try app.credentials()?.session)
            let ended = try await app.run("end-session", try #require(session.sessionID))
            #expect(ended.exitCode == 0, "\(ended)")
            #expect(try await server.status(of: "/api/v1/validate-token", bearer: session.accessToken) == 401)
            #expect(try await server.refreshStatus(try #require(session.refreshToken)) == 401)
            let status = try await app.json("status")
            #expect(status.result.exitCode == 3, "\(status.result)")
        }
    }

    @Test func endSessionOfAnUnknownIDExits1AndChangesNothing() async throws {
        try await DeviceApp.run { app, server in
            try await app.register()
            let session = try #require(try app.credentials()?.session)
            let ended = try await app.run("end-session", UUID().uuidString)
            #expect(ended.exitCode == 1, "\(ended)")
            #expect(ended.stderr.contains("None of your live sessions has this ID."), "\(ended)")
            #expect(try await server.status(of: "/api/v1/validate-token", bearer: session.accessToken) == 200)
        }
    }

    @Test func exportPrintsTheServersDocument() async throws {
        try await DeviceApp.run { app, _ in
            let userID = try await app.register()
            let export = try await app.run("export")
            #expect(export.exitCode == 0, "\(export)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])
            #expect(Set(["user", "identities", "devices", "sessions", "budget", "usage", "audit_events"]).isSubset(of: Set(object.keys)))
            #expect((object["user"] as? [String: Any])?["id"] as? String == userID)
            let session = try #require(try app.credentials()?.session)
            #expect(!export.stdout.contains(session.accessToken))
            #expect(!export.stdout.contains(try #require(session.refreshToken)))
        }
    }
}
