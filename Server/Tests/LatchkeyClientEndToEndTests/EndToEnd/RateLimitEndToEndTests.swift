import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import Testing

/// The server's 429 reaches the app as `LatchkeyError.rateLimited` with the headers' numbers, and as an event.
@Suite struct RateLimitEndToEndTests {
    @Test func aRateLimitedRegistrationSurfacesRateLimitInfoAsAnErrorAndAnEvent() async throws {
        var limits = AbuseLimits.off
        limits.registerDevice.limit = 1
        try await LiveServer.run(limits: limits) { server in
            try await AppInstall(server: server).launch().registerDevice()
            let app = AppInstall(server: server)
            let session = app.launch()
            let events = await session.events()
            do {
                try await session.registerDevice()
                Issue.record("the second registration from one address should be limited")
            } catch LatchkeyError.rateLimited(let info) {
                #expect(info.limit == 1)
                #expect(info.remaining == 0)
                #expect(info.retryAfter == 3600)
                #expect(info.description == "Try again in 60 minutes.")
            }
            var iterator = events.makeAsyncIterator()
            while let event = await iterator.next() {
                if case .rateLimited(let info) = event {
                    #expect(info.limit == 1)
                    break
                }
            }
        }
    }
}
