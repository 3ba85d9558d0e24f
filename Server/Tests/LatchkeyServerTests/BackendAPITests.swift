import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The backend API over a real socket: the app's own server reads and changes users with its key.
@Suite struct BackendAPITests {
    static func withBackend<T: Sendable>(_ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T) async throws -> T {
        try await withServer(.live, configure: Backend.configure, body)
    }

    @Test func aWrongKeyIs401AndChangesNothing() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            for bearer in ["wrong-key", nil] as [String?] {
                let patch = try await client.send(.patch, Backend.path(device.userID), bearer: bearer, json: #"{"app_metadata": {"plan": "pro"}}"#)
                #expect(patch.status == .unauthorized)
                #expect(patch.envelope?.error.code == .invalidToken)
                let disable = try await client.send(.post, Backend.path(device.userID, "disable"), bearer: bearer)
                #expect(disable.status == .unauthorized)
            }
            let shown = try Backend.object(try await client.send(.get, Backend.path(device.userID), bearer: Backend.key))
            #expect((shown["app_metadata"] as? [String: Any])?.isEmpty == true)
            #expect(shown["disabled"] as? Bool == false)
            #expect(try await client.refresh(device.refreshToken).status == .ok)
        }
    }

    @Test func withoutAConfiguredKeyTheRoutesAre404() async throws {
        try await withServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.get, Backend.path(device.userID), bearer: "anything")
            #expect(response.status == .notFound)
            #expect(response.envelope?.error.code == .notFound)
        }
    }

    @Test func everyNamedKeyWorksAndIsAuditedByItsName() async throws {
        let old = ServiceKeyEntry(name: "old", key: String(repeating: "o", count: 32))
        let new = ServiceKeyEntry(name: "new", key: String(repeating: "n", count: 32))
        try await withServer(.live, configure: { $0.backendServiceKeys = [old, new] }) { client, server in
            let device = try await client.registerDevice()
            for entry in [old, new] {
                #expect(try await client.send(.post, Backend.path(device.userID, "refresh-claims"), bearer: entry.key).status == .noContent)
            }
            let actors = try await server.services.audit.events(AuditQuery(action: AuditAction.userClaimsRefresh)).map(\.actor)
            #expect(Set(actors) == ["backend:old", "backend:new"])
        }
    }

    @Test func getShowsTheUserWithDevicesAndTheDisabledFlag() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.get, Backend.path(device.userID), bearer: Backend.key)
            #expect(response.status == .ok)
            let shown = try Backend.object(response)
            #expect(shown["user_id"] as? String == device.userID)
            #expect(shown["kind"] as? String == "device")
            #expect((shown["devices"] as? [[String: Any]])?.first?["device_id"] as? String == device.userID)
            #expect((shown["identities"] as? [Any])?.isEmpty == true)
            #expect(shown["disabled"] as? Bool == false)
        }
    }

    @Test func unknownUsersAre404AndBadIDs400() async throws {
        try await Self.withBackend { client, _ in
            #expect(try await client.send(.get, Backend.path(UUID().uuidString), bearer: Backend.key).status == .notFound)
            let bad = try await client.send(.get, Backend.path("not-a-uuid"), bearer: Backend.key)
            #expect(bad.status == .badRequest)
        }
    }

    @Test func appMetadataIsInTheNextTokenAndAudited() async throws {
        try await Self.withBackend { client, server in
            let device = try await client.registerDevice()
            #expect(try Backend.payload(of: device.accessToken)["app_metadata"] == nil)
            let patch = try await client.send(
                .patch, Backend.path(device.userID), bearer: Backend.key, json: #"{"app_metadata": {"plan": "pro", "seats": 3}}"#)
            #expect(patch.status == .ok)
            #expect((try Backend.object(patch)["app_metadata"] as? [String: Any])?["plan"] as? String == "pro")
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let metadata = try Backend.payload(of: refreshed.accessToken)["app_metadata"] as? [String: Any]
            #expect(metadata?["plan"] as? String == "pro")
            #expect(metadata?["seats"] as? Int == 3)
            let audited = try await server.services.audit.events(AuditQuery(action: AuditAction.userAppMetadataSet))
            #expect(audited.map(\.actor) == ["backend"])
            #expect(audited.first?.target == "user \(device.userID)")
        }
    }

    @Test func anOversizedOrNonObjectAppMetadataIs400AndNothingStored() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            let big = String(repeating: "x", count: 2100)
            for body in [#"{"app_metadata": {"big": "\#(big)"}}"#, #"{"app_metadata": [1, 2]}"#, #"{"app_metadata": "pro"}"#] {
                let response = try await client.send(.patch, Backend.path(device.userID), bearer: Backend.key, json: body)
                #expect(response.status == .badRequest, "\(body.prefix(40))")
                #expect(response.envelope?.error.code == .invalidRequest)
            }
            let shown = try Backend.object(try await client.send(.get, Backend.path(device.userID), bearer: Backend.key))
            #expect((shown["app_metadata"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test func revokeSessionsEndsThemAndCounts() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, Backend.path(device.userID, "revoke-sessions"), bearer: Backend.key)
            #expect(response.status == .ok)
            #expect(try Backend.object(response)["revoked_sessions"] as? Int == 1)
            #expect(try await client.refresh(device.refreshToken).status == .unauthorized)
        }
    }

    @Test func deleteDeletesTheUser() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.send(.delete, Backend.path(device.userID), bearer: Backend.key).status == .noContent)
            #expect(try await client.send(.get, Backend.path(device.userID), bearer: Backend.key).status == .notFound)
            #expect(try await client.send(.delete, Backend.path(device.userID), bearer: Backend.key).status == .notFound)
        }
    }

    @Test func theUsersSocketsHearClaimsChangedOnPatchAndRefreshClaims() async throws {
        let server = try await TestServer.make(configure: Backend.configure)
        try await server.test(.live) { client in
            let pair = try await client.registerDevice()
            let socket = try await EventSocketClient.open(port: client.port!, token: pair.accessToken)
            #expect(try await socket.next().type == "connected")
            let patch = try await client.send(.patch, Backend.path(pair.userID), bearer: Backend.key, json: #"{"app_metadata": {"plan": "pro"}}"#)
            #expect(patch.status == .ok)
            #expect(try await socket.next().type == "claims.changed")
            #expect(try await client.send(.post, Backend.path(pair.userID, "refresh-claims"), bearer: Backend.key).status == .noContent)
            #expect(try await socket.next().type == "claims.changed")
        }
    }

    @Test func refreshClaimsIs204ForAUserAnd404ForNone() async throws {
        try await Self.withBackend { client, _ in
            let device = try await client.registerDevice()
            #expect(try await client.send(.post, Backend.path(device.userID, "refresh-claims"), bearer: Backend.key).status == .noContent)
            #expect(try await client.send(.post, Backend.path(UUID().uuidString, "refresh-claims"), bearer: Backend.key).status == .notFound)
        }
    }
}
