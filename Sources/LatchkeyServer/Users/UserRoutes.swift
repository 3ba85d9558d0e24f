import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/users/register` and the profile at `GET /api/v1/users/me` and `GET /api/v1/auth/me`.
@available(LatchkeyServer 1.0, *)
struct UserRoutes {
    let users: UserService
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(public router: RouterGroup<LatchkeyRequestContext>, authenticated: RouterGroup<LatchkeyRequestContext>) {
        router.post("users/register") { request, context in
            // Limited like register-device: a UUID claimed here is the account's for good, so claiming must not be cheap.
            try await self.limiter.limiting(self.limits.registerUser, key: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                let body = try await request.decodeJSON(as: RegisterUserRequest.self, limit: self.maxBodySize)
                let userID = try canonicalUUID(body.userID, field: "user_id")
                let created = try await self.users.register(userID: userID)
                return try jsonResponse(RegisterUserResponse(userID: userID, created: created), status: created ? .created : .ok)
            }
        }
        for path in ["users/me", "auth/me"] {
            authenticated.get(RouterPath(path)) { _, context in
                try jsonResponse(try await self.users.profile(for: try context.requireIdentity()))
            }
        }
    }
}
