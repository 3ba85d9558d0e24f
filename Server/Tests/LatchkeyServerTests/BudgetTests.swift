import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Budgets (seed 000's "budget, usage"): a default on registration, shown by users/me, usage recorded by app
/// backends with the service key, idempotent, refused once exhausted, set by support staff.
@Suite struct BudgetTests {
    static let serviceKey = "test-service-key-0123456789"

    static func withBudgets<T: Sendable>(
        _ transport: Transport = .router, limit: Double = 10, _ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T
    ) async throws -> T {
        try await withServer(
            transport,
            configure: {
                $0.budgets.defaultLimit = limit
                $0.budgets.serviceKey = Self.serviceKey
            }, body)
    }

    static func record(
        _ client: some TestClientProtocol, _ userID: String, _ amount: Double, key: String, bearer: String? = serviceKey
    )
        async throws -> TestResponse
    {
        try await client.send(.post, "/api/v1/usage", bearer: bearer, body: UsageRequest(userID: userID, amount: amount, idempotencyKey: key))
    }

    @Test(arguments: Transport.allCases)
    func aNewUserHasTheDefaultBudgetOnUsersMe(transport: Transport) async throws {
        try await Self.withBudgets(transport) { client, _ async throws in
            let device = try await client.registerDevice()
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).decode(UserProfile.self)
            #expect(profile.budget == UserProfile.Budget(limit: 10, used: 0, period: "30d"))
        }
    }

    @Test(arguments: Transport.allCases)
    func recordedUsageShowsOnUsersMe(transport: Transport) async throws {
        try await Self.withBudgets(transport) { client, _ async throws in
            let device = try await client.registerDevice()
            let response = try await Self.record(client, device.userID, 3.5, key: "job-1")
            #expect(response.status == .ok)
            #expect(
                try response.decode(UsageResponse.self)
                    == UsageResponse(userID: device.userID, recorded: true, budget: .init(limit: 10, used: 3.5, period: "30d")))
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).decode(UserProfile.self)
            #expect(profile.budget?.remaining == 6.5)
        }
    }

    @Test func theSameIdempotencyKeyTwiceCountsOnce() async throws {
        try await Self.withBudgets { client, _ async throws in
            let device = try await client.registerDevice()
            #expect(try await Self.record(client, device.userID, 2, key: "job-1").decode(UsageResponse.self).recorded)
            let again = try await Self.record(client, device.userID, 2, key: "job-1").decode(UsageResponse.self)
            #expect(!again.recorded)
            #expect(again.budget.used == 2)
        }
    }

    @Test func anExhaustedBudgetAnswers429BudgetExhaustedAndRecordsNothing() async throws {
        try await Self.withBudgets(limit: 5) { client, server async throws in
            let device = try await client.registerDevice()
            #expect(try await Self.record(client, device.userID, 5, key: "a").status == .ok)
            let refused = try await Self.record(client, device.userID, 1, key: "b")
            #expect(refused.status == .tooManyRequests)
            #expect(refused.envelope?.error.code == .budgetExhausted)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).used == 5)
        }
    }

    @Test func theBudgetPeriodRolls() async throws {
        try await Self.withBudgets(limit: 5) { client, server async throws in
            let device = try await client.registerDevice()
            #expect(try await Self.record(client, device.userID, 5, key: "a").status == .ok)
            server.clock.advance(by: 30 * 86_400 + 1)
            let later = try await Self.record(client, device.userID, 1, key: "b")
            #expect(later.status == .ok)
            #expect(try later.decode(UsageResponse.self).budget.used == 1)
        }
    }

    @Test(arguments: [nil, "wrong-key", "Bearer-less"])
    func usageWithoutTheServiceKeyIs401(bearer: String?) async throws {
        try await Self.withBudgets { client, server in
            let device = try await client.registerDevice()
            let response = try await Self.record(client, device.userID, 1, key: "a", bearer: bearer)
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] != nil)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).used == 0)
        }
    }

    @Test func aUsersAccessTokenIsNotAServiceKey() async throws {
        try await Self.withBudgets { client, _ async throws in
            let device = try await client.registerDevice()
            #expect(try await Self.record(client, device.userID, 1, key: "a", bearer: device.accessToken).status == .unauthorized)
        }
    }

    @Test func withoutAConfiguredServiceKeyUsageIs403() async throws {
        try await withServer(.router) { client, _ async throws in
            let device = try await client.registerDevice()
            let response = try await Self.record(client, device.userID, 1, key: "a", bearer: "anything")
            #expect(response.status == .forbidden)
        }
    }

    @Test(arguments: [
        #"{"user_id":"not-a-uuid","amount":1,"idempotency_key":"a"}"#, #"{"user_id":"%@","amount":0,"idempotency_key":"a"}"#,
        #"{"user_id":"%@","amount":-2,"idempotency_key":"a"}"#, #"{"user_id":"%@","amount":1,"idempotency_key":""}"#, #"{"user_id":"%@"}"#,
    ])
    func badUsageIs400AndRecordsNothing(template: String) async throws {
        try await Self.withBudgets { client, server in
            let device = try await client.registerDevice()
            let body = template.replacingOccurrences(of: "%@", with: device.userID)
            let response = try await client.send(.post, "/api/v1/usage", bearer: Self.serviceKey, json: body)
            #expect(response.status == .badRequest)
            #expect(try await server.services.budgets.budget(ofUser: device.userID).used == 0)
        }
    }

    @Test func usageForAnUnknownUserIs404() async throws {
        try await Self.withBudgets { client, _ async throws in
            #expect(try await Self.record(client, UUID().uuidString, 1, key: "a").status == .notFound)
        }
    }

    @Test func supportStaffSetABudgetWithTheCLI() async throws {
        try await Self.withBudgets(.live) { client, server async throws in
            let device = try await client.registerDevice()
            let set = try await server.cli("users", "budget", device.userID, "--set", "42")
            #expect(set.exitCode == 0, "\(set)")
            #expect(set.stdout.contains("limit: 42.0"))
            let profile = try await client.send(.get, "/api/v1/users/me", bearer: device.accessToken).decode(UserProfile.self)
            #expect(profile.budget?.limit == 42)
            let unknown = try await server.cli("users", "budget", UUID().uuidString, "--set", "1")
            #expect(unknown.exitCode != 0)
        }
    }
}
