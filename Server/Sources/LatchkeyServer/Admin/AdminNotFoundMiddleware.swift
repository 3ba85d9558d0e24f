import Foundation
import Hummingbird

/// Answers any path under `/admin` that no console route takes (any method, signed in or not) with the console's own
/// 404 page, not the API's JSON envelope; with the navigation when the request carries a signed-in console session.
/// Placed on the router (the only place the router's "no such route" passes through), it lets every other path by.
struct AdminNotFoundMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let admin: AdminService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == "/admin" || path.hasPrefix("/admin/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            var session: AdminSession?
            if let cookie = request.cookies[AdminRoutes.sessionCookie]?.value, let live = try await self.admin.session(cookie: cookie),
                live.stage == .signedIn
            {
                session = live
            }
            var response = AdminRoutes.message(
                "Not found", "There is no console page at this address.", status: .notFound, session: session)
            AdminHeadersMiddleware.secure(&response)
            return response
        }
    }
}
