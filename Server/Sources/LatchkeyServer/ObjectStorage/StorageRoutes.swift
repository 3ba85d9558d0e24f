import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/storage/credentials` and `POST /api/v1/storage/presign` (Bearer), `GET /api/v1/assets` and
/// `GET /api/v1/assets/url` (`X-Device-ID` of a known device only).
struct StorageRoutes {
    let storage: StorageService
    let verifier: AccessTokenVerifier
    let devices: any DeviceStore
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        let signedIn = RouteRequirement<LatchkeyRequestContext>.token(
            self.verifier, kinds: [.session, .accessCode, .external],
            refusal: "Guests have no storage: sign in (register the device, or Sign in with Apple) first.")
        api.add(Self.credentials, requirements: [signedIn]) { _, context in
            Answer.tokens(try await self.storage.credentials(forUser: try context.requireIdentity().userID))
        }
        api.add(Self.presign, requirements: [signedIn]) { request, context in
            let body = try await request.decode(as: PresignRequest.self, context: context)
            return Answer.tokens(try self.storage.presign(body, forUser: try context.requireIdentity().userID))
        }
        let device: [RouteRequirement<LatchkeyRequestContext>] = [
            .knownDevice(self.devices), .limitedPerDevice(by: self.limits.assets, limiter: self.limiter, counting: "asset requests"),
        ]
        api.add(Self.assets, requirements: device) { request, _ in
            let query = request.uri.queryParameters
            return Answer(try await self.storage.assets(prefix: query["prefix"].map(String.init), cursor: query["cursor"].map(String.init)))
        }
        api.add(Self.assetURL, requirements: device) { request, _ in
            guard let key = request.uri.queryParameters["key"] else { throw APIError.badRequest("Send key: the asset's key.", code: .invalidKey) }
            return Answer.tokens(try self.storage.assetURL(key: String(key)))
        }
    }
}

extension RouteRequirement where Context == LatchkeyRequestContext {
    /// `X-Device-ID` naming a device Latchkey knows: 400 `invalid_header` without a UUID, 401 `unknown_device` for
    /// one it does not know. No `Authorization` is read.
    static func knownDevice(_ devices: any DeviceStore) -> RouteRequirement {
        RouteRequirement([KnownDeviceMiddleware(devices: devices)]) { operation in
            operation.parameters.append(
                .init("X-Device-ID", in: .header, required: true, "The device UUID, registered before.", schema: .string(format: "uuid")))
            operation.add(.badRequest("`X-Device-ID` is missing or not a UUID (`invalid_header`), or a parameter is not valid."))
            operation.add(.init(401, "The device is not known: register it first (`unknown_device`).", headers: ["WWW-Authenticate"]))
        }
    }
}

/// Lets a request through when its `X-Device-ID` names a known device.
struct KnownDeviceMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let devices: any DeviceStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard try await self.devices.isKnownDevice(id: try request.requireDeviceID()) else {
            throw APIError(
                .unauthorized, .unknownDevice, "This device is not registered: register it (users/register or auth/register-device) first.")
        }
        return try await next(request, context)
    }
}
