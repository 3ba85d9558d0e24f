import Hummingbird
import LatchkeyAPI

/// `/api/v1/backend/users/{id}`: the app's own server reads and changes a user with a backend key
/// (``RouteRequirement/backendKey(_:)``).
struct BackendRoutes {
    let backend: BackendService
    let keys: BackendKeys

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        let requirements: [RouteRequirement<LatchkeyRequestContext>] = [.backendKey(self.keys)]
        api.add(Self.show, requirements: requirements) { _, context in
            Answer(try await self.backend.user(id: try Self.userID(context), by: try Self.actor(context)))
        }
        api.add(Self.update, requirements: requirements) { request, context in
            let id = try Self.userID(context)
            let body = try await request.decode(as: BackendUserUpdate.self, context: context)
            return Answer(try await self.backend.setAppMetadata(body.appMetadata, ofUser: id, by: try Self.actor(context)))
        }
        api.add(Self.delete, requirements: requirements) { _, context in
            try await self.backend.delete(userID: try Self.userID(context), by: try Self.actor(context))
            return Response(status: .noContent)
        }
        api.add(Self.revokeSessions, requirements: requirements) { _, context in
            let id = try Self.userID(context)
            let count = try await self.backend.revokeSessions(ofUser: id, by: try Self.actor(context))
            return Answer(BackendRevokedSessions(userID: id, revokedSessions: count))
        }
        api.add(Self.disable, requirements: requirements) { _, context in
            let id = try Self.userID(context)
            _ = try await self.backend.disable(userID: id, by: try Self.actor(context))
            return Answer(try await self.backend.current(id: id))
        }
        api.add(Self.enable, requirements: requirements) { _, context in
            let id = try Self.userID(context)
            try await self.backend.enable(userID: id, by: try Self.actor(context))
            return Answer(try await self.backend.current(id: id))
        }
        api.add(Self.refreshClaims, requirements: requirements) { _, context in
            try await self.backend.refreshClaims(ofUser: try Self.userID(context), by: try Self.actor(context))
            return Response(status: .noContent)
        }
    }

    private static func userID(_ context: LatchkeyRequestContext) throws -> String {
        try canonicalUUID(try context.parameters.require("id"), field: "id")
    }

    /// Who called, as the audit log names them: `backend` or `backend:<key name>`.
    private static func actor(_ context: LatchkeyRequestContext) throws -> AuditActor {
        guard let name = context.backendActor else { throw APIError.missingToken }
        return AuditActor(name: name, source: context.remoteAddress?.ipAddress ?? "api")
    }
}
