import Foundation
import LatchkeyClient
import Testing

/// Seed 003 (the hairstyle app) through ``HairstyleAuth``: guests with `X-Device-ID`, a 5-minute expiry buffer, and the
/// daily limit's 429 as a message.
@Suite struct Seed003HairstyleTests {
    /// A 15-minute guest token from Latchkey; the edit route is over its daily limit, with the headers the seed lists.
    static func install() -> StubbedInstall {
        StubbedInstall { request in
            switch (request.url.host ?? "", request.url.path) {
            case ("auth.hairstyle.example", "/api/v1/auth/guest"):
                return .json(200, GuestSessionResponse(accessToken: "guest-1", expiresIn: 900, limitations: GuestLimitations(maxActionsPerDay: 5)))
            case ("auth.hairstyle.example", "/api/v1/auth/me") where request.bearer == "guest-1":
                return .profile("guest-user", kind: .guest, tokenKind: .guest)
            case ("api.hairstyle.example", "/api/v1/hairstyles/edit"):
                return TransportResponse(
                    status: 429,
                    headers: ["X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800010800", "Retry-After": "10800"])
            default:
                return .error(401, .invalidToken)
            }
        }
    }

    @Test func aGuestsSixthEditOfTheDayShowsTheDailyLimitFromTheRateLimitHeaders() async throws {
        let install = Self.install()
        let app = HairstyleAuth(session: install.session(HairstyleAuth.configuration))
        #expect(await app.launch() == .auth(notice: nil))
        #expect(try await app.continueAsGuest() == 5)

        let result = try await app.edit(photo: Data([0xFF, 0xD8]))
        #expect(result == .dailyLimitReached("You've reached your daily limit of 5 hairstyle edits. Try again in 3 hours."))
        let edit = try #require(install.transport.requests(to: "api.hairstyle.example", "/api/v1/hairstyles/edit").first)
        #expect(edit.bearer == "guest-1")
        let deviceID = try await app.session.deviceID()
        #expect(edit.header("X-Device-ID") == deviceID.uuidString.lowercased())
    }

    @Test func aGuestTokenIsRestoredUntilItsLastFiveMinutes() async throws {
        let install = Self.install()
        _ = try await HairstyleAuth(session: install.session(HairstyleAuth.configuration)).continueAsGuest()

        install.clock.advance(by: 9 * 60)  // 6 minutes left
        #expect(await HairstyleAuth(session: install.session(HairstyleAuth.configuration)).launch() == .editor)
        install.clock.advance(by: 2 * 60)  // 4 minutes left: inside the buffer
        #expect(
            await HairstyleAuth(session: install.session(HairstyleAuth.configuration)).launch()
                == .auth(notice: "Your guest session has ended. Continue as guest to keep editing."))
    }
}
