import Hummingbird
import LatchkeyAPI
import Logging

/// Turns every error into the envelope; anything unexpected becomes a 500 with no detail leaked.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError =
                APIError.translating(error)
                ?? {
                    // The error's own text may quote input; log only its type.
                    context.logger.error("unhandled error", metadata: ["error_type": "\(type(of: error))"])
                    return APIError(.internalServerError, .internalError, "Something went wrong on the server.")
                }()
            return try apiError.response(from: request, context: context)
        }
    }
}
