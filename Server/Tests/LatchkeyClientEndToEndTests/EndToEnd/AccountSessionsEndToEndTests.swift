import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 31, "Where you're signed in": `sessions()`, `endSession(id:)` and `exportAccount()` against a live server.
@Suite struct AccountSessionsEndToEndTests {
    /// A second install of the same device user (its credentials copied without the session, as a restored backup
    /// would): its `registerDevice()` starts a second session of the user.
    static func secondInstall(of first: AppInstall, server: LiveServer) throws -> AppInstall {
        let second = AppInstall(server: server)
        var credentials = try #require(try first.store.load())
        credentials.session = nil
        try second.store.save(credentials)
        second.defaults.set(credentials.deviceID.uuidString, forKey: "latchkey.device-id")
        return second
    }

    @Test func sessionsListsBothInstallsAndEndingTheOtherSignsItOut() async throws {
        try await LiveServer.run { server in
            let first = AppInstall(server: server)
            let here = first.launch()
            try await here.registerDevice()
            let second = try Self.secondInstall(of: first, server: server)
            let there = second.launch()
            try await there.registerDevice()
            let hereID = try #require(try first.store.load()?.session?.sessionID)
            let thereID = try #require(try second.store.load()?.session?.sessionID)

            let listed = try await here.sessions()
            #expect(Set(listed.map(\.id)) == [hereID, thereID])
            #expect(listed.first { $0.current }?.id == hereID)
            #expect(listed.allSatisfy { $0.method == "device" && $0.lastUsedAt.count == 10 })

            try await here.endSession(id: thereID)
            #expect(try await here.sessions().map(\.id) == [hereID])
            // The other install's refresh token is dead: its next refresh fails and it is signed out.
            await #expect(throws: LatchkeyError.self) { try await there.refresh() }
            #expect(try second.store.load()?.session == nil)
            #expect(try first.store.load()?.session != nil)
        }
    }

    @Test func endingThisAppsOwnSessionSignsItOut() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            let own = try #require(try app.store.load()?.session)
            try await session.endSession(id: try #require(own.sessionID))
            #expect(try app.store.load()?.session == nil)
            if case .signedOut = await session.state {} else { Issue.record("still signed in: \(await session.state)") }
            // Refused by the server too.
            var request = URLRequest(url: server.url.appendingPathComponent("api/v1/validate-token"))
            request.setValue("Bearer \(own.accessToken)", forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
        }
    }

    @Test func anUnknownSessionIsNotFound() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            let error = await #expect(throws: LatchkeyError.self) { try await session.endSession(id: UUID().uuidString) }
            #expect(error?.code == .notFound)
            #expect(try app.store.load()?.session != nil)
        }
    }

    @Test func theExportDecodesAndTheDeviceKeyStandsInForARecentSignIn() async throws {
        try await LiveServer.run { server in
            let app = AppInstall(server: server)
            let session = app.launch()
            try await session.registerDevice()
            let userID = try #require(try app.store.load()?.session?.userID)
            app.advance(by: 3600)  // the sign-in is long past: the proof of the session's key is what counts
            let data = try await session.exportAccount()
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let export = try decoder.decode(AccountExport.self, from: data)
            #expect(export.user.id == userID)
            #expect(export.devices.map(\.id) == [userID])
            #expect(export.devices.first?.keyBound == true)
            #expect(export.sessions.count == 1)
            let text = String(decoding: data, as: UTF8.self)
            #expect(!text.contains(try #require(try app.store.load()?.session?.refreshToken)))
        }
    }
}
